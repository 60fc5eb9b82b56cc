package prfeedback

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Report is one published report as the feedback describes it.
type Report struct {
	ProjectID    int64
	Name         string
	Generator    string
	Branch       string
	Commit       string
	Summary      *report.Summary
	DashboardURL string
	SiteURL      string
	PDFURL       string
	// Base is what the comparison was asked for ("branch:main", "previous").
	Base       string
	Comparison *report.Comparison // nil when it could not be had (CompareErr says why)
	CompareErr string
	Gates      []GateResult
}

// MaxListed is how many tests of each comparison list a comment names.
const MaxListed = 10

// Marker is the hidden line by which a later upload finds its comment.
func Marker(projectID int64, name string) string {
	return fmt.Sprintf("<!-- reportd:%d:%s -->", projectID, strings.ReplaceAll(name, "-->", "--&gt;"))
}

// Body is the comment's Markdown: the marker, a heading with the gates'
// verdict, the figures beside the base's with deltas, the first new
// failures, the files whose coverage dropped, and the links.
func Body(r Report) string {
	var b strings.Builder
	b.WriteString(Marker(r.ProjectID, r.Name) + "\n")
	verdict := ""
	if len(r.Gates) > 0 {
		verdict = " — ✅ quality gates passed"
		if !AllPassed(r.Gates) {
			verdict = " — ❌ quality gate failed"
		}
	}
	fmt.Fprintf(&b, "### reportd: %s%s\n\n", EscapeMarkdown(r.Name), verdict)
	if r.Generator != "" {
		fmt.Fprintf(&b, "%s report", EscapeMarkdown(r.Generator))
	} else {
		b.WriteString("Report")
	}
	if r.Commit != "" {
		fmt.Fprintf(&b, " for %s", codeSpan(short(r.Commit)))
	}
	var base *report.HistoryPoint
	if r.Comparison != nil {
		base = r.Comparison.Base
	}
	switch {
	case base != nil:
		fmt.Fprintf(&b, ", compared with [report %d](%s)%s", base.ReportID, siblingURL(r.DashboardURL, base.ReportID), onWhat(base))
	case r.Comparison != nil:
		fmt.Fprintf(&b, "; no base report to compare with (%s)", EscapeMarkdown(r.Base))
	case r.CompareErr != "":
		fmt.Fprintf(&b, "; no comparison: %s", EscapeMarkdown(r.CompareErr))
	}
	b.WriteString(".\n\n")

	figures(&b, r.Summary, base, r.Comparison)
	if c := r.Comparison; c != nil {
		testList(&b, "New failures", c.NewFailures, r.DashboardURL)
		testList(&b, "Fixed", c.Fixed, r.DashboardURL)
		testList(&b, "Flaky", c.Flaky, r.DashboardURL)
		if n := len(c.StillFailing); n > 0 {
			fmt.Fprintf(&b, "%d test(s) still failing.\n\n", n)
		}
		if len(c.Files) > 0 {
			b.WriteString("**Coverage dropped in**\n\n| File | Before | After |\n|---|--:|--:|\n")
			for i, f := range c.Files {
				if i == MaxListed {
					fmt.Fprintf(&b, "| … and %d more | | |\n", len(c.Files)-MaxListed)
					break
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", codeCell(f.Path), pct(f.Before), pct(f.After))
			}
			b.WriteString("\n")
		}
	}
	if len(r.Gates) > 0 {
		b.WriteString("**Quality gates**\n\n")
		for _, g := range r.Gates {
			mark := "✅"
			if !g.Passed {
				mark = "❌"
			}
			fmt.Fprintf(&b, "- %s %s: %s\n", mark, EscapeMarkdown(g.Gate), EscapeMarkdown(g.Message))
		}
		b.WriteString("\n")
	}
	links := []string{fmt.Sprintf("[Dashboard](%s)", r.DashboardURL)}
	if r.SiteURL != "" {
		links = append(links, fmt.Sprintf("[Site](%s)", r.SiteURL))
	}
	if r.PDFURL != "" {
		links = append(links, fmt.Sprintf("[PDF](%s)", r.PDFURL))
	}
	b.WriteString(strings.Join(links, " · ") + "\n")
	return b.String()
}

// figures writes the table of the report's figures, with the base's and
// the change where there is a base.
func figures(b *strings.Builder, s *report.Summary, base *report.HistoryPoint, c *report.Comparison) {
	if s.Empty() {
		return
	}
	var bs, delta *report.Summary
	if base != nil {
		bs, delta = base.Summary, c.Delta
	}
	if base != nil {
		b.WriteString("| | Base | This build | Change |\n|---|--:|--:|--:|\n")
	} else {
		b.WriteString("| | This build |\n|---|--:|\n")
	}
	row := func(label string, get func(*report.Summary) string, d string) {
		v := get(s)
		if v == "" {
			return
		}
		if base != nil {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", label, orDash(get(bs)), v, orDash(d))
		} else {
			fmt.Fprintf(b, "| %s | %s |\n", label, v)
		}
	}
	lines := func(x *report.Summary) string {
		if x == nil || x.Lines == nil {
			return ""
		}
		return pct(*x.Lines)
	}
	var ld string
	if delta != nil && delta.Lines != nil {
		ld = signed(strconv.FormatFloat(float64(int64(*delta.Lines*100+sign(*delta.Lines)*0.5))/100, 'f', -1, 64), *delta.Lines) + " pp"
	}
	row("Coverage", lines, ld)
	for _, f := range []struct {
		label string
		get   func(*report.Summary) *int64
	}{
		{"Passed", func(x *report.Summary) *int64 { return x.Passed }},
		{"Failed", func(x *report.Summary) *int64 { return x.Failed }},
		{"Skipped", func(x *report.Summary) *int64 { return x.Skipped }},
		{"Flaky", func(x *report.Summary) *int64 { return x.Flaky }},
	} {
		get := func(x *report.Summary) string {
			if x == nil || f.get(x) == nil {
				return ""
			}
			return strconv.FormatInt(*f.get(x), 10)
		}
		var d string
		if delta != nil && f.get(delta) != nil {
			n := *f.get(delta)
			d = signed(strconv.FormatInt(n, 10), float64(n))
		}
		row(f.label, get, d)
	}
	b.WriteString("\n")
}

func testList(b *strings.Builder, title string, ts []report.TestRef, link string) {
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(b, "**%s (%d)**\n\n", title, len(ts))
	for i, t := range ts {
		if i == MaxListed {
			fmt.Fprintf(b, "- … and %d more in the [report](%s)\n", len(ts)-MaxListed, link)
			break
		}
		name := t.Title
		if name == "" {
			name = t.ID
		}
		fmt.Fprintf(b, "- [%s](%s)\n", EscapeMarkdown(name), link)
	}
	b.WriteString("\n")
}

// siblingURL is the dashboard link of another report: the head's link
// with its id replaced (…/reports/7 -> …/reports/5).
func siblingURL(dashboard string, id int64) string {
	i := strings.LastIndexByte(dashboard, '/')
	if i < 0 {
		return dashboard
	}
	return dashboard[:i+1] + strconv.FormatInt(id, 10)
}

func onWhat(p *report.HistoryPoint) string {
	var s string
	if p.Branch != nil {
		s += " on " + codeSpan(*p.Branch)
	}
	if p.Commit != nil {
		s += " at " + codeSpan(short(*p.Commit))
	}
	return s
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func signed(s string, f float64) string {
	if f > 0 {
		return "+" + s
	}
	if f == 0 {
		return "±0"
	}
	return strings.Replace(s, "-", "−", 1)
}

func sign(f float64) float64 {
	if f < 0 {
		return -1
	}
	return 1
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// codeSpan is s as one line of inline code: a backtick becomes ' and
// line breaks become spaces.
func codeSpan(s string) string {
	return "`" + strings.NewReplacer("`", "'", "\n", " ", "\r", " ").Replace(s) + "`"
}

// codeCell is s as inline code in a table cell: GitHub and GitLab split
// cells at | even inside code, unless it is escaped.
func codeCell(s string) string { return codeSpan(strings.ReplaceAll(s, "|", `\|`)) }

// EscapeMarkdown makes text literal in Markdown (a table cell, a list
// item): Markdown's punctuation is escaped, line breaks become spaces, and
// an @ is followed by an invisible zero-width space, so that "@someone" in
// a test's title does not mention (and notify) that user or team. A
// backslash cannot do that: forges find mentions in the rendered text. The
// zero-width space is what Renovate uses on GitHub, GitLab and Gitea; code
// spans need none (no forge finds mentions in code).
func EscapeMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '#', '!', '~', '&':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r':
			b.WriteByte(' ')
		case '@':
			b.WriteString("@" + zeroWidthSpace)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// zeroWidthSpace is U+200B, which renders as nothing.
const zeroWidthSpace = "\u200b"
