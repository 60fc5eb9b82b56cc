package chromium

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/convert/markdown"
)

// The warm document lays out what jobs use (warmdoc.go): the Markdown
// stylesheet and each kind of element the renderer makes, CJK in every font
// stack, the generic families; and it runs nothing.
func TestWarmDocCoversWhatJobsLayOut(t *testing.T) {
	doc := string(warmDoc())
	if !strings.Contains(doc, markdown.CSS) {
		t.Error("the warm document lacks the Markdown stylesheet")
	}
	for _, want := range []string{"<h1", "<h2", "<strong>", "<em>", "<del>", "<code>", "<table>", "<th",
		`type="checkbox"`, "<pre", "<span style=", "footnote", "你好",
		"font-family:serif", "font-family:sans-serif", "font-family:monospace"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the warm document lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "<img", "<link", "@import", "url("} {
		if strings.Contains(strings.ToLower(doc), bad) {
			t.Errorf("the warm document holds %q: it must run and fetch nothing", bad)
		}
	}
	if strings.Count(doc, "</main>") != 1 || !strings.Contains(doc, "</main>"+warmGeneric) {
		t.Error("the generic families are not after the report")
	}
	if !bytes.Equal(warmDoc(), warmDoc()) {
		t.Error("the warm document differs between calls")
	}
}
