package convert

import (
	"bytes"
	"io"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

func TestPDFPassthrough(t *testing.T) {
	m := newManager(t, nil)
	orig := fixture(t, "sample.pdf")
	job := jobFor(t, report.PDF, orig)
	f, err := m.PDF(testCtx(t), job)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _ := io.ReadAll(f)
	if !bytes.Equal(got, orig) {
		t.Error("a PDF report must be served as stored, not re-rendered")
	}
	if f.Name() != job.Src {
		t.Errorf("served %s, want the original %s", f.Name(), job.Src)
	}
}

func TestPDFFakeOrTruncated(t *testing.T) {
	m := newManager(t, nil)
	orig := fixture(t, "sample.pdf")
	for name, content := range map[string][]byte{
		"text":      []byte("this is not a PDF at all"),
		"empty":     nil,
		"html":      []byte("<html><body>%PDF-1.7</body></html>"),
		"truncated": orig[:len(orig)/2],
	} {
		t.Run(name, func(t *testing.T) {
			_, err := m.PDF(testCtx(t), jobFor(t, report.PDF, content))
			re := wantKind(t, err, report.Conversion)
			if re.Message == "" {
				t.Error("empty message")
			}
		})
	}
}
