package ops

import (
	"context"

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

// CreatedToken is the one answer that carries a secret.
type CreatedToken struct {
	Token  tokens.Token `json:"token"`
	Secret string       `json:"secret"`
}

// CreateToken validates req (the projects must exist) and creates the
// token; the same code serves the admin route and the offline command.
func CreateToken(ctx context.Context, store report.MetaStore, set *tokens.Set, req TokenRequest) (CreatedToken, error) {
	scope, err := tokens.ParseScope(req.Scope)
	if err != nil {
		return CreatedToken{}, report.Errorf(report.Validation, "%v", err)
	}
	sp := tokens.Spec{Name: req.Name, Scope: scope, Projects: req.Projects, CreateProjects: req.CreateProjects, ProjectPrefix: req.ProjectPrefix}
	if req.Expires != "" {
		if sp.Expires, err = tokens.ParseExpiry(req.Expires); err != nil {
			return CreatedToken{}, report.Errorf(report.Validation, "%v", err)
		}
	}
	for _, p := range req.Projects {
		if _, err := store.Project(ctx, p); report.IsKind(err, report.NotFound) {
			return CreatedToken{}, report.Errorf(report.Validation, "project %d does not exist", p)
		} else if err != nil {
			return CreatedToken{}, err
		}
	}
	t, secret, err := set.Create(sp)
	return CreatedToken{Token: t, Secret: secret}, err
}

// RevokeToken revokes id; with keepOne it refuses to revoke the last
// token that is not revoked (the daemon would be open beyond loopback).
func RevokeToken(set *tokens.Set, id string, keepOne bool) (tokens.Token, error) {
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
