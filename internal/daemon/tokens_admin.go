package daemon

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// TokenRequest is the body of POST /admin/tokens (ops.TokenRequest).
type TokenRequest = ops.TokenRequest

// createdToken is the one answer that carries a secret.
type createdToken = ops.CreatedToken

// Tokens is the daemon's token set (nil before Open).
func (m *Server) Tokens() *tokens.Set { return m.tokens }

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
		c, err := ops.CreateToken(r.Context(), a.meta, a.tokens, req)
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
		t, err := ops.RevokeToken(a.tokens, id, a.keepOneToken)
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
