package service_test

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// FuzzBaseName checks the file-name sanitiser: whatever a client sends,
// an accepted name is one plain path element that cannot address anything
// but itself, and sanitising it again changes nothing.
func FuzzBaseName(f *testing.F) {
	for _, s := range []string{
		"report.html", "../../etc/passwd.html", `..\..\windows\win.ini.md`, "/abs/x.pdf", "C:\\a\\b.pptx",
		"a/b/", "..", ".", "/", "", "   ", " padded.md ", "dir/..", "a\x00b.html", "a\x01.md", "a\x7f.md",
		"Grüße.html", "\xff\xfe.pdf", strings.Repeat("a", 255), strings.Repeat("a", 256), strings.Repeat("é", 128),
		"a//b.html", "./.md", "..../x.ppt", "x/\u2028.html", "%2e%2e%2fx.html", "\t\n.html",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := service.BaseName(in)
		if err != nil {
			if !report.IsKind(err, report.Validation) {
				t.Fatalf("BaseName(%q): error of kind %s: %v", in, report.KindOf(err), err)
			}
			return
		}
		switch {
		case got == "" || got == "." || got == "..":
			t.Fatalf("BaseName(%q) = %q: not a file name", in, got)
		case strings.ContainsAny(got, `/\`):
			t.Fatalf("BaseName(%q) = %q: still a path", in, got)
		case len(got) > 255:
			t.Fatalf("BaseName(%q) = %d bytes", in, len(got))
		case !utf8.ValidString(got):
			t.Fatalf("BaseName(%q) = %q: not UTF-8", in, got)
		case strings.TrimSpace(got) != got:
			t.Fatalf("BaseName(%q) = %q: surrounding space", in, got)
		case path.Base(got) != got:
			t.Fatalf("BaseName(%q) = %q: path.Base changes it", in, got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("BaseName(%q) = %q: control character", in, got)
			}
		}
		// The result is the input's last element, not an invention.
		if !strings.Contains(in, got) {
			t.Fatalf("BaseName(%q) = %q: not part of the input", in, got)
		}
		again, err := service.BaseName(got)
		if err != nil || again != got {
			t.Fatalf("BaseName is not idempotent on %q: %q, %v", got, again, err)
		}
	})
}
