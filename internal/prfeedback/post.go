package prfeedback

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Options say what feedback to give.
type Options struct {
	Comment bool // post or edit the request's comment
	Status  bool // set a commit status
	Retry   Retry
}

// Outcome is what the feedback did for one report (upload's --json
// "feedback"). Comment is "created", "updated", "summary" (written to the
// step summary instead) or "" (none); Warnings are the problems that did
// not fail the upload.
type Outcome struct {
	Comment    string   `json:"comment,omitempty"`
	CommentURL string   `json:"commentUrl,omitempty"`
	CommentID  int64    `json:"commentId,omitempty"`
	Status     string   `json:"status,omitempty"` // the state set
	Warnings   []string `json:"warnings,omitempty"`
}

// ErrNoToken says there is no token that can write: a pull request from
// a fork gets no GITHUB_TOKEN with write access, and GitLab needs
// REPORTCTL_GITLAB_TOKEN.
var ErrNoToken = errors.New("no token that can write")

// Give posts (or edits) the comment of r and sets its status. A problem
// with the forge is returned as an error after doing what could be done;
// the caller decides whether it fails the upload. Without a token the
// comment goes to the step summary (GitHub) with a message saying why.
func Give(ctx context.Context, t Target, r Report, o Options) (Outcome, error) {
	var out Outcome
	if t.Token == "" {
		return degrade(t, r, o, "")
	}
	f, err := newForge(t, o.Retry)
	if err != nil {
		return out, err
	}
	var errs []error
	if o.Comment {
		if t.Number == 0 {
			out.Warnings = append(out.Warnings, "--comment: this job is not for a pull or merge request; no comment posted")
		} else if err := comment(ctx, f, r, &out); err != nil {
			if t.Fork {
				// GitHub gives a fork's pull request a read-only token.
				d, derr := degrade(t, r, Options{Comment: true}, fmt.Sprintf("GitHub refused the comment (%v): this pull request comes from a fork, whose token cannot write", err))
				out.Comment, out.Warnings = d.Comment, append(out.Warnings, d.Warnings...)
				errs = append(errs, derr)
			} else {
				errs = append(errs, fmt.Errorf("%s comment: %w", forgeName(t), err))
			}
		}
	}
	if o.Status {
		if t.SHA == "" {
			errs = append(errs, errors.New("--status: no commit (GITHUB_SHA / CI_COMMIT_SHA) to set a status on"))
		} else {
			s := StatusOf(r)
			if err := f.status(ctx, t.SHA, s); err != nil {
				errs = append(errs, fmt.Errorf("%s commit status: %w", forgeName(t), err))
			} else {
				out.Status = s.State
			}
		}
	}
	return out, errors.Join(errs...)
}

// comment edits the request's comment that carries r's marker, or posts
// one. Several with the marker (two jobs raced): the oldest is edited.
func comment(ctx context.Context, f forge, r Report, out *Outcome) error {
	body := Body(r)
	cs, err := f.comments(ctx)
	if err != nil {
		return fmt.Errorf("listing comments: %w", err)
	}
	marker := Marker(r.ProjectID, r.Name)
	for _, c := range cs {
		if strings.Contains(c.Body, marker) {
			u, err := f.update(ctx, c.ID, body)
			if refusedOrGone(err) {
				continue // someone else's comment quoting the marker, or deleted meanwhile
			}
			if err != nil {
				return fmt.Errorf("editing comment %d: %w", c.ID, err)
			}
			out.Comment, out.CommentID, out.CommentURL = "updated", u.ID, u.URL
			return nil
		}
	}
	c, err := f.create(ctx, body)
	if err != nil {
		return fmt.Errorf("posting comment: %w", err)
	}
	out.Comment, out.CommentID, out.CommentURL = "created", c.ID, c.URL
	return nil
}

// degrade writes the comment to GitHub's step summary when there is no
// token to post it with, and says so.
func degrade(t Target, r Report, o Options, why string) (Outcome, error) {
	var out Outcome
	switch {
	case why != "":
	case t.Forge == GitLab:
		why = "no REPORTCTL_GITLAB_TOKEN (CI_JOB_TOKEN cannot write merge request notes)"
	case t.Fork:
		why = "no GITHUB_TOKEN: this pull request comes from a fork, whose jobs get no token that can write"
	default:
		why = "no GITHUB_TOKEN"
	}
	var what []string
	if o.Comment && t.Number > 0 {
		what = append(what, "comment")
	}
	if o.Status {
		what = append(what, "commit status")
	}
	if len(what) == 0 {
		return out, nil
	}
	msg := fmt.Sprintf("%s: %s not posted", why, strings.Join(what, " and "))
	if o.Comment && t.Number > 0 && t.Summary != "" {
		if err := appendFile(t.Summary, Body(r)+"\n"); err != nil {
			return out, fmt.Errorf("%s; writing it to GITHUB_STEP_SUMMARY: %w", msg, err)
		}
		out.Comment = "summary"
		msg += "; the comment is in the job's step summary instead"
	}
	out.Warnings = append(out.Warnings, msg)
	return out, fmt.Errorf("%w: %s", ErrNoToken, msg)
}

// StatusOf is r's commit status: failure when a gate failed, success
// otherwise, with the figures as description and the dashboard as target.
func StatusOf(r Report) Status {
	s := Status{State: StateSuccess, Context: "reportd/" + r.Name, TargetURL: r.DashboardURL}
	var parts []string
	for _, g := range r.Gates {
		if !g.Passed {
			s.State = StateFailure
			parts = append(parts, "failed: "+g.Message)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, figureLine(r))
	}
	s.Description = strings.Join(parts, "; ")
	if rs := []rune(s.Description); len(rs) > 140 { // GitHub's limit
		s.Description = string(rs[:139]) + "…"
	}
	return s
}

func figureLine(r Report) string {
	s := r.Summary
	if s.Empty() {
		return "published"
	}
	var p []string
	if s.Lines != nil {
		p = append(p, pct(*s.Lines)+" lines")
	}
	for _, f := range []struct {
		n    *int64
		word string
	}{{s.Passed, "passed"}, {s.Failed, "failed"}, {s.Skipped, "skipped"}, {s.Flaky, "flaky"}} {
		if f.n != nil {
			p = append(p, fmt.Sprintf("%d %s", *f.n, f.word))
		}
	}
	return strings.Join(p, ", ")
}

func forgeName(t Target) string {
	if t.Forge == GitLab {
		return "GitLab"
	}
	return "GitHub"
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(s)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
