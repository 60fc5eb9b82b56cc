package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/report"
)

// policyFlags are --keep-last, --max-age and --keep-newest-per-branch, as
// `prune` (an override for this prune) and `projects retention set` (the
// stored policy) take them. "inherit" unsets a field.
type policyFlags struct {
	keepLast, maxAge string
	newest           triBool
}

func (p *policyFlags) add(fs *pflag.FlagSet, what string) {
	fs.StringVar(&p.keepLast, "keep-last", "", "keep the newest `N` reports of each name and branch ("+what+"; 0: no limit)")
	fs.StringVar(&p.maxAge, "max-age", "", "remove reports older than `AGE`: whole days such as 30d, 12w ("+what+"; 0: no limit)")
	fs.Var(&p.newest, "keep-newest-per-branch", "always keep the newest report of each name and branch (true, false; "+what+")")
	fs.Lookup("keep-newest-per-branch").NoOptDefVal = "true"
}

// retention reads the flags that were given into r, which holds the
// fields to start from. "inherit" sets a field to nil.
func (p *policyFlags) retention(cmd *cobra.Command, r report.Retention) (report.Retention, bool, error) {
	fl := cmd.Flags()
	changed := false
	if fl.Changed("keep-last") {
		changed = true
		r.KeepLast = nil
		if p.keepLast != "inherit" {
			n, err := strconv.Atoi(p.keepLast)
			if err != nil || n < 0 || n > report.MaxKeepLast {
				return r, false, usageErrorf("--keep-last must be a whole number from 0 to %d, or inherit (got %q)", report.MaxKeepLast, p.keepLast)
			}
			r.KeepLast = &n
		}
	}
	if fl.Changed("max-age") {
		changed = true
		r.MaxAgeDays = nil
		if p.maxAge != "inherit" {
			d, err := report.ParseAgeDays(p.maxAge)
			if err != nil {
				return r, false, usageErrorf("--max-age: %s", report.MessageOf(err))
			}
			r.MaxAgeDays = &d
		}
	}
	if fl.Changed("keep-newest-per-branch") {
		changed = true
		r.KeepNewestPerBranch = p.newest.v
	}
	return r, changed, nil
}

// triBool is true, false or inherit (nil).
type triBool struct{ v *bool }

func (t *triBool) String() string {
	if t.v == nil {
		return ""
	}
	return strconv.FormatBool(*t.v)
}

func (t *triBool) Set(s string) error {
	if s == "inherit" {
		t.v = nil
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true, false or inherit, not %q", s)
	}
	t.v = &b
	return nil
}

func (t *triBool) Type() string     { return "bool" }
func (t *triBool) IsBoolFlag() bool { return true }

// findProject resolves a project given by id or by exact name.
func findProject(ctx context.Context, c *client.Client, ref string) (report.Project, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		return c.GetProject(ctx, id)
	}
	ps, err := c.ListProjects(ctx)
	if err != nil {
		return report.Project{}, err
	}
	var found []report.Project
	for _, p := range ps {
		if p.Name == ref {
			found = append(found, p)
		}
	}
	if len(found) == 0 { // a slug, as stable links show it (acme-api for acme/api)
		for _, p := range ps {
			if p.Slug == ref {
				found = append(found, p)
			}
		}
	}
	switch len(found) {
	case 0:
		return report.Project{}, report.Errorf(report.NotFound, "no project with id, name or slug %q", ref)
	case 1:
		return found[0], nil
	}
	return report.Project{}, fmt.Errorf("%d projects are named %q: give the id instead", len(found), ref)
}

// showInt is a policy number for people, and whether it is inherited.
func showInt(v *int, effective int, zero string) string {
	s := strconv.Itoa(effective)
	if effective == 0 {
		s = zero
	}
	if v == nil {
		return s + " (server default)"
	}
	return s
}
