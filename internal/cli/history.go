package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
)

func newHistoryCmd(f *Factory) *cobra.Command {
	var o client.HistoryOptions
	var branch string
	cmd := &cobra.Command{
		Use:   "history --project ID|SLUG --name NAME [--branch BRANCH] [--type TYPE] [--limit N]",
		Short: "Show how a report's figures moved across builds, oldest first",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Project == "" || o.Name == "" {
				return exitcode.With(exitcode.Usage, errors.New("history needs --project and --name"))
			}
			if cmd.Flags().Changed("branch") {
				o.Branch = &branch
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			o.Flaky = true // the MARKED column
			pts, err := c.History(cmd.Context(), o)
			if err != nil {
				return err
			}
			if wantJSON(cmd) {
				return writeJSON(f.IO.Out, pts)
			}
			return printHistory(f.IO.Out, f.IO.OutTTY, pts)
		},
	}
	cmd.Flags().StringVarP(&o.Project, "project", "p", "", "the project, by `ID` or slug")
	cmd.Flags().StringVar(&o.Name, "name", "", "the report `NAME` (such as coverage)")
	cmd.Flags().StringVar(&branch, "branch", "", "only builds of `BRANCH` (\"\": those without one)")
	cmd.Flags().StringVar(&o.Type, "type", "", "only reports of file `TYPE` (html, md, pdf, ppt, pptx)")
	cmd.Flags().IntVar(&o.Limit, "limit", 0, "the newest `N` builds (server default 100, at most 1000)")
	cmd.RegisterFlagCompletionFunc("project", completeProjectFlag(f))
	return cmd
}

func printHistory(w io.Writer, tty bool, pts []report.HistoryPoint) error {
	// Columns are only ever added at the end, for scripts that cut them.
	t := newTable(w, tty, "REPORT", "UPLOADED", "BRANCH", "COMMIT", "LINES", "PASSED", "FAILED", "SKIPPED", "FLAKY", "MARKED")
	for _, p := range pts {
		s := p.Summary
		if s == nil {
			s = &report.Summary{}
		}
		t.add(itoa(p.ReportID), p.UploadTime.String(), orDash(p.Branch), orDash(nonNil(shortCommit(p.Commit))),
			pctOrDash(s.Lines), intOrDash(s.Passed), intOrDash(s.Failed), intOrDash(s.Skipped), intOrDash(s.Flaky), itoa(int64(len(p.Flaky))))
	}
	return t.print()
}

func newCompareCmd(f *Factory) *cobra.Command {
	var base string
	cmd := &cobra.Command{
		Use:               "compare REPORT_ID [--base previous|branch:NAME|REPORT_ID]",
		Short:             "Compare a report with an earlier one: figure deltas, new failures, fixes, flaky tests",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeReportIDs(f),
		RunE: runWithID("report", func(cmd *cobra.Command, id int64) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			cmp, err := c.Compare(cmd.Context(), id, base)
			if err != nil {
				return err
			}
			if wantJSON(cmd) {
				return writeJSON(f.IO.Out, cmp)
			}
			return printComparison(f.IO.Out, cmp)
		}),
	}
	cmd.Flags().StringVar(&base, "base", "previous", "what to compare with: `previous` (the newest earlier build of the branch), branch:NAME or a report id")
	return cmd
}

func printComparison(w io.Writer, c report.Comparison) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "Report %d", c.Head.ReportID)
	if c.Base == nil {
		fmt.Fprintln(ew, ": no base report to compare with")
	} else {
		fmt.Fprintf(ew, " compared with report %d (%s, %s)\n", c.Base.ReportID, orDash(c.Base.Branch), orDash(nonNil(shortCommit(c.Base.Commit))))
	}
	head := c.Head.Summary
	if head == nil {
		head = &report.Summary{}
	}
	d := c.Delta
	if d == nil {
		d = &report.Summary{}
	}
	for _, row := range []struct {
		name string
		v, d string
	}{
		{"lines", pctOrDash(head.Lines), signedPct(d.Lines)},
		{"passed", intOrDash(head.Passed), signedInt(d.Passed)},
		{"failed", intOrDash(head.Failed), signedInt(d.Failed)},
		{"skipped", intOrDash(head.Skipped), signedInt(d.Skipped)},
		{"flaky", intOrDash(head.Flaky), signedInt(d.Flaky)},
	} {
		if row.v != "-" {
			fmt.Fprintf(ew, "  %-8s %8s %8s\n", row.name, row.v, row.d)
		}
	}
	for _, l := range []struct {
		title string
		refs  []report.TestRef
	}{{"New failures", c.NewFailures}, {"Fixed", c.Fixed}, {"Still failing", c.StillFailing}, {"Flaky", c.Flaky}} {
		if len(l.refs) == 0 {
			continue
		}
		fmt.Fprintf(ew, "%s (%d):\n", l.title, len(l.refs))
		for _, r := range l.refs {
			fmt.Fprintf(ew, "  %s\n", r.Title)
		}
	}
	if len(c.Files) > 0 {
		fmt.Fprintf(ew, "Coverage dropped (%d files):\n", len(c.Files))
		for _, f := range c.Files {
			fmt.Fprintf(ew, "  %s  %s → %s\n", f.Path, strconv.FormatFloat(f.Before, 'f', -1, 64)+"%", strconv.FormatFloat(f.After, 'f', -1, 64)+"%")
		}
	}
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func pctOrDash(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64) + "%"
}

func intOrDash(v *int64) string {
	if v == nil {
		return "-"
	}
	return itoa(*v)
}

func signedPct(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%+g", *v)
}

func signedInt(v *int64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%+d", *v)
}
