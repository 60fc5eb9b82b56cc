package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/prfeedback"
	"github.com/reportd/reportd/internal/report"
)

// feedbackFlags are upload's pull-request feedback and quality gates.
type feedbackFlags struct {
	comment   string // "", "on" or "required"
	status    bool
	failUnder []string
	failOn    []string
	gates     []prfeedback.Gate
}

func (ff *feedbackFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&ff.comment, "comment", "", "post the figures as a pull/merge request comment, edited on later uploads (GitHub Actions, GitLab CI); `=required` fails the upload when that fails")
	fl.Lookup("comment").NoOptDefVal = "on"
	fl.BoolVar(&ff.status, "status", false, "set a commit status (GitHub, GitLab) with the dashboard link; failure when a gate fails")
	fl.StringArrayVar(&ff.failUnder, "fail-under", nil, "quality gate: exit 7 after publishing when line coverage is below `coverage=PERCENT` (repeatable)")
	fl.StringArrayVar(&ff.failOn, "fail-on", nil, "quality gate: exit 7 after publishing when tests fail: `failures` or new-failures (against the base branch; repeatable)")
}

func (ff *feedbackFlags) completions(cmd *cobra.Command) {
	cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{prfeedback.GateFailures, prfeedback.GateNewFailures}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("fail-under", cobra.FixedCompletions([]string{"coverage="}, cobra.ShellCompDirectiveNoSpace|cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("comment", cobra.FixedCompletions([]string{"required"}, cobra.ShellCompDirectiveNoFileComp))
}

const feedbackEnvHelp = `Pull-request feedback of ` + "`reportctl upload --comment --status`" + `:

GITHUB_TOKEN
    Token that posts the pull request's comment and the commit status
    (permissions: pull-requests: write, statuses: write). With
    GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_REF (refs/pull/N/merge),
    GITHUB_EVENT_PATH, GITHUB_BASE_REF and GITHUB_STEP_SUMMARY, as GitHub
    Actions sets them.

REPORTCTL_GITLAB_TOKEN
    Token (scope api) that posts the merge request's note and the commit
    status; CI_JOB_TOKEN cannot write notes. With CI_API_V4_URL,
    CI_PROJECT_ID, CI_MERGE_REQUEST_IID, CI_MERGE_REQUEST_TARGET_BRANCH_NAME
    and CI_COMMIT_SHA, as GitLab CI sets them.

`

// parse checks the flags; errors are usage errors.
func (ff *feedbackFlags) parse() error {
	switch ff.comment {
	case "", "on", "required":
	default:
		return usageErrorf("--comment=%s: the only value is required (--comment alone posts without failing)", ff.comment)
	}
	for _, s := range ff.failUnder {
		g, err := prfeedback.ParseFailUnder(s)
		if err != nil {
			return usageErrorf("%s", err)
		}
		ff.gates = append(ff.gates, g)
	}
	for _, s := range ff.failOn {
		for _, part := range strings.Split(s, ",") {
			g, err := prfeedback.ParseFailOn(part)
			if err != nil {
				return usageErrorf("%s", err)
			}
			ff.gates = append(ff.gates, g)
		}
	}
	return nil
}

func (ff *feedbackFlags) active() bool {
	return ff.comment != "" || ff.status || len(ff.gates) > 0
}

// giveFeedback compares each published report with its base, checks the
// gates and gives the pull-request feedback. It fills results' gates and
// feedback fields and returns the gates no report could be checked
// against, whether every gate passed, and an error that fails the upload
// (a forge's error with --comment=required; warnings are printed).
func giveFeedback(ctx context.Context, o *uploadOptions, c *client.Client, results []uploadResult) (unchecked []prfeedback.GateResult, passed bool, err error) {
	ff := &o.feedback
	target, terr := prfeedback.Detect(osEnv)
	wantForge := ff.comment != "" || ff.status
	if wantForge && terr != nil {
		msg := "--comment/--status: " + terr.Error()
		if ff.comment == "required" {
			return nil, false, errors.New(msg)
		}
		fmt.Fprintf(o.f.IO.ErrOut, "warning: %s\n", msg)
		wantForge = false
	}
	base := "previous"
	if target.Base != "" {
		base = "branch:" + target.Base
	}
	retry := prfeedback.DefaultRetry
	if cfg, cerr := o.f.Config(); cerr == nil && cfg.RetryWait > 0 {
		retry.Wait = cfg.RetryWait
	}

	var all [][]prfeedback.GateResult
	var errs []error
	for i := range results {
		r := &results[i]
		if r.Report == nil {
			continue
		}
		fr := prfeedback.Report{
			ProjectID: r.ProjectID, Name: r.Name, Generator: r.Generator, Summary: r.Summary,
			DashboardURL: r.DashboardURL, SiteURL: r.SiteURL, PDFURL: r.PDFURL, Base: base,
		}
		if r.Commit != nil {
			fr.Commit = *r.Commit
		}
		if wantForge || needsComparison(ff.gates) {
			fr.Comparison, err = compareReport(ctx, c, r.ID, base)
			if err == nil && fr.Comparison.Base == nil && base != "previous" {
				// Nothing of this name on the target branch yet: the
				// request's own previous build is the next best base.
				if prev, perr := compareReport(ctx, c, r.ID, "previous"); perr == nil && prev.Base != nil {
					fr.Comparison, fr.Base = prev, "previous"
				}
			}
			if err != nil {
				fr.CompareErr = err.Error()
			}
		}
		fr.Gates = prfeedback.CheckGates(ff.gates, r.Summary, fr.Comparison)
		r.Gates = fr.Gates
		all = append(all, fr.Gates)
		if !wantForge {
			continue
		}
		out, ferr := prfeedback.Give(ctx, target, fr, prfeedback.Options{Comment: ff.comment != "", Status: ff.status, Retry: retry})
		r.Feedback = &out
		for _, w := range out.Warnings {
			fmt.Fprintf(o.f.IO.ErrOut, "warning: %s: %s\n", r.Name, w)
		}
		if ferr == nil {
			continue
		}
		// A fork's pull request is expected to have no token that can write.
		if ff.comment == "required" && !(errors.Is(ferr, prfeedback.ErrNoToken) && target.Fork) {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, ferr))
		} else if !errors.Is(ferr, prfeedback.ErrNoToken) {
			fmt.Fprintf(o.f.IO.ErrOut, "warning: %s: %v\n", r.Name, ferr)
		}
	}
	unchecked = prfeedback.Unchecked(ff.gates, all)
	passed = prfeedback.AllPassed(unchecked)
	for _, rs := range all {
		passed = passed && prfeedback.AllPassed(rs)
	}
	if len(errs) > 0 {
		return unchecked, passed, fmt.Errorf("--comment=required: %w", errors.Join(errs...))
	}
	return unchecked, passed, nil
}

func needsComparison(gates []prfeedback.Gate) bool {
	for _, g := range gates {
		if g.Kind == prfeedback.GateNewFailures {
			return true
		}
	}
	return false
}

// gateError is exit status 7 naming the failed gates.
func gateError(results []uploadResult, unchecked []prfeedback.GateResult) error {
	var failed []string
	for _, r := range results {
		for _, g := range r.Gates {
			if !g.Passed {
				failed = append(failed, fmt.Sprintf("%s: %s (%s)", r.Name, g.Gate, g.Message))
			}
		}
	}
	for _, g := range unchecked {
		failed = append(failed, fmt.Sprintf("%s (%s)", g.Gate, g.Message))
	}
	return exitcode.With(exitcode.GateFailed, fmt.Errorf("quality gate failed after publishing: %s", strings.Join(failed, "; ")))
}

// gatesMarkdown is the step summary's list of gates.
func gatesMarkdown(results []uploadResult, unchecked []prfeedback.GateResult) string {
	var b strings.Builder
	line := func(name string, g prfeedback.GateResult) {
		mark := "✅"
		if !g.Passed {
			mark = "❌"
		}
		fmt.Fprintf(&b, "- %s %s%s: %s\n", mark, name, prfeedback.EscapeMarkdown(g.Gate), prfeedback.EscapeMarkdown(g.Message))
	}
	for _, r := range results {
		for _, g := range r.Gates {
			line(prfeedback.EscapeMarkdown(r.Name)+": ", g)
		}
	}
	for _, g := range unchecked {
		line("", g)
	}
	if b.Len() == 0 {
		return ""
	}
	return "**Quality gates**\n\n" + b.String() + "\n"
}

// compareReport is GET /api/reports/{id}/compare?base=...
func compareReport(ctx context.Context, c *client.Client, id int64, base string) (*report.Comparison, error) {
	cmp, err := c.Compare(ctx, id, base)
	if err != nil {
		return nil, err
	}
	return &cmp, nil
}
