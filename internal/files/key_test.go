package files

import (
	"testing"

	"github.com/reportd/reportd/internal/report"
)

func TestKey(t *testing.T) {
	for p, want := range map[string]string{
		"/uploads/reports/7.pdf":     "reports/7.pdf",
		"/uploads/covers/3/logo.png": "covers/3/logo.png",
		"/uploads/covers/3/a b.jpeg": "covers/3/a b.jpeg",
	} {
		k, err := Key(p)
		if err != nil || k != want {
			t.Errorf("Key(%q) = %q, %v; want %q", p, k, err, want)
		}
		if APIPath(k) != p {
			t.Errorf("APIPath(%q) = %q", k, APIPath(k))
		}
	}
	for _, p := range []string{"", "/", "/uploads", "/uploads/", "uploads/reports/1.pdf", "/uploads/../reportd.db",
		"/uploads/reports/../../x", "/uploads//reports/1.pdf", "/uploads/reports/1.pdf/", `/uploads/reports\1.pdf`, "/uploads/a\x00b", "/tmp/x"} {
		if k, err := Key(p); !report.IsKind(err, report.NotFound) {
			t.Errorf("Key(%q) = %q, %v; want NotFound", p, k, err)
		}
	}
}
