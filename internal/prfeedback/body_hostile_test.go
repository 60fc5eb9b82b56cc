package prfeedback_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/prfeedback"
	"github.com/reportd/reportd/internal/report"
)

// mention is what GitHub, GitLab and Gitea take for a mention of a user or
// team: @ right before a name's first character.
var mention = regexp.MustCompile(`@[\p{L}\p{N}_]`)

// rawTag is the start of an HTML tag that no backslash escapes.
var rawTag = regexp.MustCompile(`(^|[^\\])<[A-Za-z/!?]`)

// Untrusted text (test titles, a report's name and generator, an error,
// a gate's message) mentions nobody in the comment, cannot break out of
// its list item or make HTML, and still reads as written.
func TestBodyHostileText(t *testing.T) {
	hostile := []string{
		"@octocat breaks login",
		"cc @org/team and @all",
		"mail me@example.com",
		"<img src=x onerror=alert(1)> | `tick`",
		"two\nlines\r\n- [ ] injected item",
		"[click](https://evil.example) **bold** @",
	}
	r := coverageReport(70)
	r.Name = "nightly @octocat"
	r.Generator = "@gen <b>"
	r.CompareErr = "base @someone\nnot found"
	var tests []report.TestRef
	for i, h := range hostile {
		tests = append(tests, report.TestRef{ID: string(rune('a' + i)), Title: h})
	}
	withErr := prfeedback.Body(r) // CompareErr is shown only without a comparison

	r.CompareErr = ""
	r.Comparison = &report.Comparison{NewFailures: tests}
	r.Gates = []prfeedback.GateResult{{Gate: "no @reviewers", Message: "@team <script>", Passed: false}}
	withTests := prfeedback.Body(r)

	for _, body := range []string{withErr, withTests} {
		// The marker line is an HTML comment: hidden, and no forge finds
		// mentions in it.
		_, visible, _ := strings.Cut(body, "\n")
		if m := mention.FindAllString(visible, -1); m != nil {
			t.Errorf("mentions %q left in:\n%s", m, visible)
		}
		if m := rawTag.FindAllString(visible, -1); m != nil {
			t.Errorf("raw HTML %q left in:\n%s", m, visible)
		}
	}
	// Each title is one list item, whatever its line breaks.
	items := 0
	for line := range strings.SplitSeq(withTests, "\n") {
		if strings.HasPrefix(line, "- ") {
			items++
		}
	}
	if want := len(hostile) + len(r.Gates); items != want {
		t.Errorf("%d list items, want %d (one per test and gate):\n%s", items, want, withTests)
	}
	// Read as rendered (escapes and the invisible space dropped), each
	// title is there as written, its line breaks as spaces.
	rendered := strings.NewReplacer("\u200b", "", `\`, "").Replace(withTests)
	for _, h := range hostile {
		if want := strings.NewReplacer("\r", " ", "\n", " ").Replace(h); !strings.Contains(rendered, want) {
			t.Errorf("title %q not shown as written in:\n%s", want, withTests)
		}
	}
}
