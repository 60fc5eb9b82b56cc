package convert

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// Nothing of a Markdown source may be lost at the page's right edge: every
// column of a wide table, every character of a long word or URL; and emoji
// print as glyphs of the colour emoji font, not as tofu.
func TestMarkdownWideContentIsNotCut(t *testing.T) {
	testfixture.NeedChromium(t)
	var src strings.Builder
	src.WriteString("# Wide content\n\n")
	var head, rule, row []string
	for i := 1; i <= 30; i++ {
		head = append(head, fmt.Sprintf("col%02d", i))
		rule = append(rule, "---")
		row = append(row, fmt.Sprint(i*1000+i))
	}
	for _, r := range [][]string{head, rule, row} {
		src.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	var word strings.Builder
	for i := 0; word.Len() < 300; i++ {
		fmt.Fprintf(&word, "w%03d", i)
	}
	long := word.String()[:300]
	url := "https://example.org/" + strings.Repeat("path", 70) + "/end"
	fmt.Fprintf(&src, "\nA long word: %s and a link %s.\n\nWeather: ☀️ and a rocket 🚀.\n", long, url)

	pdf := convertOK(t, sharedManager(t), jobFor(t, report.MD, []byte(src.String())))
	text := testfixture.PDFText(t, pdf)
	for _, h := range head {
		testfixture.WantText(t, text, h)
	}
	joined := strings.Join(strings.Fields(text), "")
	for _, w := range []string{long, url} {
		if !strings.Contains(joined, w) {
			t.Errorf("the %d-character word is not whole in the text layer:\n%s", len(w), text)
		}
	}
	// Chromium embeds colour emoji (Noto Color Emoji's bitmaps) as Type 3
	// fonts; tofu would be a missing glyph of a TrueType text font.
	testfixture.WantText(t, text, "🚀")
	if fonts := pdfFonts(t, pdf); !strings.Contains(fonts, "Type 3") {
		t.Errorf("the emoji are not colour glyphs (no Type 3 font); pdffonts:\n%s", fonts)
	}
}

// pdfFonts is pdffonts' listing of the fonts pdf embeds.
func pdfFonts(t *testing.T, pdf []byte) string {
	t.Helper()
	testfixture.NeedPoppler(t)
	p := filepath.Join(t.TempDir(), "out.pdf")
	if err := os.WriteFile(p, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdffonts", p).Output()
	if err != nil {
		t.Fatalf("pdffonts: %v", err)
	}
	return string(out)
}
