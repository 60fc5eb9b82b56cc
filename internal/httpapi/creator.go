package httpapi

import (
	"context"
	"net/http"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// creator is the upload token creating a project through the access
// matrix's creator rule (reportd token create --allow-create-projects);
// nil for everyone else (admins, auth.token, no auth), who are not limited.
type creator struct{ *tokens.Principal }

func (s *Server) creatorOf(r *http.Request) creator {
	p := principalOf(r.Context())
	if p == nil || !p.Creates || p.Scope >= tokens.Admin || !s.authOn() {
		return creator{}
	}
	return creator{p}
}

// checkName refuses a name outside the token's prefix, before anything is
// stored.
func (c creator) checkName(name string) error {
	if c.Principal == nil || c.MayName(name) {
		return nil
	}
	return report.Errorf(report.Forbidden, "token %s may create only projects whose names start with %q; %q does not", c.ID, c.Prefix, name)
}

// joinCreated adds the project just created to the creating token's set,
// so that the token can upload into it. If that cannot be stored the
// project is deleted again: a project the token cannot use is not left
// behind, and the creation is refused as a whole.
func (s *Server) joinCreated(ctx context.Context, c creator, project int64) error {
	if c.Principal == nil || s.cfg.Tokens == nil {
		return nil
	}
	err := s.cfg.Tokens.AddProject(c.ID, project)
	if err == nil {
		return nil
	}
	if derr := s.svc.DeleteProject(context.WithoutCancel(ctx), project); derr != nil {
		s.log.Error("a project created by a token could not join its set nor be deleted again", "project", project, "token", c.ID, "err", derr)
	}
	return err
}
