package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/reportd/reportd/internal/prfeedback"
	"github.com/reportd/reportd/internal/report"
)

// appendSummary appends a Markdown block describing the uploads to path,
// as GitHub's $GITHUB_STEP_SUMMARY and merge-request notes expect: one
// table row per report with its dashboard link, then the failures.
func appendSummary(path string, p report.Project, results []uploadResult, gates string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("--summary: %w", err)
	}
	_, werr := f.WriteString(summaryMarkdown(p, results) + gates)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("--summary: %w", werr)
	}
	return nil
}

func summaryMarkdown(p report.Project, results []uploadResult) string {
	var b strings.Builder
	target := "project " + itoa(p.ID)
	if p.Name != "" {
		target = fmt.Sprintf("%s (project %d)", prfeedback.EscapeMarkdown(p.Name), p.ID)
	}
	ok := 0
	for _, r := range results {
		if r.Report != nil {
			ok++
		}
	}
	fmt.Fprintf(&b, "### %d report(s) published to %s\n\n", ok, target)
	if ok > 0 {
		b.WriteString("| Report | File | Branch | Commit | Build | Size | Results |\n|---|---|---|---|---|---|---|\n")
		for _, r := range results {
			if r.Report == nil {
				continue
			}
			var fig *string
			if f := figuresText(r.Generator, r.Summary); f != "" {
				fig = &f
			}
			fmt.Fprintf(&b, "| [%s](%s) | %s (%s) | %s | %s | %s | %s | %s |\n",
				prfeedback.EscapeMarkdown(r.Name), r.DashboardURL, prfeedback.EscapeMarkdown(r.FileName), r.FileType,
				mdOpt(r.Branch), mdCode(shortCommit(r.Commit)), mdBuild(r.BuildID, r.BuildURL),
				sizeIEC(r.Size), mdOpt(fig))
		}
	}
	for _, r := range results {
		if r.Report == nil {
			fmt.Fprintf(&b, "\n- failed: %s: %s", prfeedback.EscapeMarkdown(r.LocalPath), prfeedback.EscapeMarkdown(r.Error))
		}
	}
	b.WriteString("\n\n")
	return b.String()
}

// describeMeta is " on BRANCH @ COMMIT" for the human output, or "".
func describeMeta(m report.BuildMeta) string {
	var s string
	if m.Branch != nil {
		s += " on " + *m.Branch
	}
	if c := shortCommit(m.Commit); c != "" {
		s += " @ " + c
	}
	return s
}

// shortCommit keeps a commit hash's first 12 characters, as git does.
func shortCommit(c *string) string {
	if c == nil {
		return ""
	}
	if len(*c) > 12 {
		return (*c)[:12]
	}
	return *c
}

func mdOpt(s *string) string {
	if s == nil {
		return "–"
	}
	return prfeedback.EscapeMarkdown(*s)
}

func mdCode(s string) string {
	if s == "" || strings.Contains(s, "`") {
		return prfeedback.EscapeMarkdown(s)
	}
	return "`" + s + "`"
}

func mdBuild(id, url *string) string {
	label := "build"
	if id != nil {
		label = "#" + prfeedback.EscapeMarkdown(*id)
	}
	switch {
	case url != nil:
		return fmt.Sprintf("[%s](<%s>)", label, strings.NewReplacer("<", "%3C", ">", "%3E", " ", "%20").Replace(*url))
	case id != nil:
		return label
	}
	return "–"
}

// sizeIEC is n bytes in the largest binary unit that keeps it at least 1.
func sizeIEC(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f, units := float64(n)/1024, "KMGTPE"
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, units[i])
}
