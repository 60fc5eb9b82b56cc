package convert

import (
	"bytes"
	"io"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sniff"
	"github.com/reportd/reportd/internal/testfixture"
)

func TestPDFPassthrough(t *testing.T) {
	m := newManager(t, nil)
	orig := fixture(t, "sample.pdf")
	job := jobFor(t, report.PDF, orig)
	f, err := m.PDF(testfixture.Ctx(t), job)
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
			_, err := m.PDF(testfixture.Ctx(t), jobFor(t, report.PDF, content))
			re := testfixture.WantKind(t, err, report.Conversion)
			if re.Message == "" {
				t.Error("empty message")
			}
		})
	}
}

// The upload and /pdf apply one rule (package sniff): whatever PDF the
// upload accepts is served, whatever it refuses is refused here too. The
// %%EOF once had a 2 KiB window at upload and 1 KiB here.
func TestPDFRuleMatchesUpload(t *testing.T) {
	m := newManager(t, nil)
	orig := fixture(t, "sample.pdf")
	for _, garbage := range []int{0, 1000, sniff.TrailerWindow - 6, sniff.TrailerWindow - 4, 1500, 2000} {
		content := append(append([]byte{}, orig...), bytes.Repeat([]byte{'\n'}, garbage)...)
		accepted := sniff.Check(bytes.NewReader(content), int64(len(content)), report.PDF) == nil
		f, err := m.PDF(testfixture.Ctx(t), jobFor(t, report.PDF, content))
		if f != nil {
			f.Close()
		}
		if (err == nil) != accepted {
			t.Errorf("%d bytes after %%%%EOF: upload accepts=%v, /pdf error=%v", garbage, accepted, err)
		}
	}
}
