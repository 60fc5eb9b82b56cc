package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// TokenRequest is the body of POST /admin/tokens.
type TokenRequest struct {
	Name     string  `json:"name"`
	Scope    string  `json:"scope"`
	Projects []int64 `json:"projects"`
	Expires  string  `json:"expires"` // "90d", "12h"; empty: never
	// CreateProjects and ProjectPrefix: an upload token that may create
	// projects (names starting with the prefix), each joining its set.
	CreateProjects bool   `json:"createProjects,omitempty"`
	ProjectPrefix  string `json:"projectPrefix,omitempty"`
}

// createdToken is the one answer that carries a secret.
type createdToken struct {
	Token  tokens.Token `json:"token"`
	Secret string       `json:"secret"`
}

// Tokens is the daemon's token set (nil before Open).
func (m *Server) Tokens() *tokens.Set { return m.tokens }

// createToken validates req (the projects must exist) and creates the
// token; the same code serves the admin route and the offline command.
func createToken(ctx context.Context, store report.MetaStore, set *tokens.Set, req TokenRequest) (createdToken, error) {
	scope, err := tokens.ParseScope(req.Scope)
	if err != nil {
		return createdToken{}, report.Errorf(report.Validation, "%v", err)
	}
	sp := tokens.Spec{Name: req.Name, Scope: scope, Projects: req.Projects, CreateProjects: req.CreateProjects, ProjectPrefix: req.ProjectPrefix}
	if req.Expires != "" {
		if sp.Expires, err = tokens.ParseExpiry(req.Expires); err != nil {
			return createdToken{}, report.Errorf(report.Validation, "%v", err)
		}
	}
	for _, p := range req.Projects {
		if _, err := store.Project(ctx, p); report.IsKind(err, report.NotFound) {
			return createdToken{}, report.Errorf(report.Validation, "project %d does not exist", p)
		} else if err != nil {
			return createdToken{}, err
		}
	}
	t, secret, err := set.Create(sp)
	return createdToken{Token: t, Secret: secret}, err
}

// revokeToken revokes id; with keepOne it refuses to revoke the last
// token that is not revoked (the daemon would be open beyond loopback).
func revokeToken(set *tokens.Set, id string, keepOne bool) (tokens.Token, error) {
	if keepOne {
		others := 0
		for _, t := range set.List() {
			if t.RevokedAt == nil && t.ID != id {
				others++
			}
		}
		if others == 0 {
			return tokens.Token{}, report.Errorf(report.Validation,
				"refusing to revoke the last token: reportd listens beyond loopback without auth.token, so the API would be open to anyone; create another token first")
		}
	}
	return set.Revoke(id)
}

// serveTokens answers GET/POST /admin/tokens and DELETE /admin/tokens/{id}.
// Every answer is no-store: one of them carries a secret.
func (a *adminHandler) serveTokens(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	id, hasID := strings.CutPrefix(r.URL.Path, adminPrefix+"tokens/")
	var allow string
	switch {
	case !hasID && r.Method == http.MethodGet:
		writeAdminJSON(w, http.StatusOK, a.tokens.List())
		return
	case !hasID && r.Method == http.MethodPost:
		var req TokenRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			a.api.WriteError(w, r, report.Errorf(report.Validation, "bad token request: %v", err))
			return
		}
		c, err := createToken(r.Context(), a.meta, a.tokens, req)
		if err != nil {
			a.api.WriteError(w, r, err)
			return
		}
		a.log.Info("token created", "token", c.Token.ID, "scope", c.Token.Scope.String(), "projects", c.Token.Projects)
		writeAdminJSON(w, http.StatusCreated, c)
		return
	case hasID && r.Method == http.MethodDelete:
		if !tokens.ValidID(id) {
			a.api.WriteError(w, r, report.Errorf(report.NotFound, "token %q not found", id))
			return
		}
		t, err := revokeToken(a.tokens, id, a.keepOneToken)
		if err != nil {
			a.api.WriteError(w, r, err)
			return
		}
		a.log.Info("token revoked", "token", t.ID)
		writeAdminJSON(w, http.StatusOK, t)
		return
	case hasID:
		allow = "DELETE"
	default:
		allow = "GET, POST"
	}
	w.Header().Set("Allow", allow)
	a.api.WriteError(w, r, report.Errorf(report.MethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
}

func writeAdminJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
