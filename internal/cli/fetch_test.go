package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/report"
)

// TestBinaryNotToTerminal: a PDF is not dumped on a terminal, text is.
func TestBinaryNotToTerminal(t *testing.T) {
	isolate(t)
	env := apitest.Start(t, apitest.Options{})
	p := env.CreateProject("tty")
	pdf := env.MustUpload(p.ID, "doc.pdf", report.PDF, apitest.MinimalPDF())
	md := env.MustUpload(p.ID, "notes.md", report.MD, []byte("# notes\n"))

	r := run(t, true, "--server", env.URL, "reports", "preview", itoa(pdf.ID))
	if r.code != 1 || !strings.Contains(r.stderr, "not writing application/pdf to a terminal") || r.stdout != "" {
		t.Fatalf("pdf on a terminal: %+v", r)
	}
	if r = run(t, false, "--server", env.URL, "reports", "preview", itoa(pdf.ID)); r.code != 0 || !strings.HasPrefix(r.stdout, "%PDF-") {
		t.Fatalf("pdf piped: exit %d", r.code)
	}
	if r = run(t, true, "--server", env.URL, "reports", "preview", itoa(md.ID)); r.code != 0 || r.stdout != "# notes\n" {
		t.Fatalf("markdown on a terminal: %+v", r)
	}
	out := filepath.Join(t.TempDir(), "x.pdf")
	if r = run(t, true, "--server", env.URL, "reports", "download", itoa(pdf.ID), "-o", out); r.code != 0 || r.stdout != out+"\n" {
		t.Fatalf("download to a file from a terminal: %+v", r)
	}
}
