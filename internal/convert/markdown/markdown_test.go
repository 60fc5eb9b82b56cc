package markdown

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is the Markdown report the convert tests print too.
func fixture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRenderMarkdownDropsRawHTML(t *testing.T) {
	out, err := Render(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	html := string(out)
	for _, bad := range []string{"<script", "INJECTED", "onclick"} {
		if strings.Contains(html, bad) {
			t.Errorf("rendered HTML contains %q", bad)
		}
	}
	for _, want := range []string{
		`<h2 id="figures">`, // auto heading ids
		"<table>", `<input checked="" disabled="" type="checkbox"`, "<del>struck</del>",
		`<a href="https://example.org">`, `class="footnotes"`,
		"<title>Monthly summary</title>",
		`<span style="color:`, // chroma highlighting
	} {
		if !strings.Contains(html, want) {
			t.Errorf("rendered HTML lacks %q", want)
		}
	}
	unsafe, _ := Render([]byte("[x](javascript:alert(1))"))
	if strings.Contains(string(unsafe), "javascript:") {
		t.Error("a javascript: link survived")
	}
}
