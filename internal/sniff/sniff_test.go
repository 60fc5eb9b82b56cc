package sniff

import (
	"archive/zip"
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

func pdfWithTail(garbage int) []byte {
	b := []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	return append(b, bytes.Repeat([]byte{' '}, garbage)...)
}

func zipWith(t *testing.T, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("<x/>"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCheck(t *testing.T) {
	bigText := bytes.Repeat([]byte("<p>text</p>\n"), 100_000) // 1.2 MB
	lateNUL := append(append([]byte{}, bigText...), 0, 'x')
	cases := []struct {
		name   string
		typ    report.FileType
		data   []byte
		reason string // "" = accepted
	}{
		{"pdf", report.PDF, pdfWithTail(0), ""},
		{"pdf with 1000 bytes after %%EOF", report.PDF, pdfWithTail(1000), ""},
		// The window is the same for upload and serving: 1.5 KB of garbage is refused.
		{"pdf with 1500 bytes after %%EOF", report.PDF, pdfWithTail(1500), "incomplete"},
		{"pdf without header", report.PDF, []byte("hello %%EOF"), "no %PDF- header"},
		{"pdf shorter than its header", report.PDF, []byte("%PD"), "no %PDF- header"},
		{"empty", report.PDF, nil, "is empty"},
		{"pptx", report.PPTX, zipWith(t, "[Content_Types].xml", "ppt/presentation.xml"), ""},
		{"pptx without presentation", report.PPTX, zipWith(t, "word/document.xml"), "no ppt/presentation.xml"},
		{"pptx corrupt zip", report.PPTX, []byte("PK\x03\x04 garbage"), "corrupt zip"},
		{"pptx not zip", report.PPTX, []byte("hello"), "not a zip"},
		{"ppt", report.PPT, append(append([]byte{}, SigOLE2...), 1, 2, 3), ""},
		{"ppt not ole2", report.PPT, []byte("PK\x03\x04"), "not an OLE2"},
		{"html", report.HTML, bigText, ""},
		{"md NUL at start", report.MD, []byte("\x00# hi"), "NUL bytes, the first at offset 0"},
		{"html NUL past the first MB", report.HTML, lateNUL, "NUL bytes, the first at offset 1200000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, scanned := range []bool{false, true} {
				var err error
				if scanned {
					s := new(Scan)
					for chunk := range slices(c.data, 4093) {
						s.Write(chunk)
					}
					err = CheckScanned(bytes.NewReader(c.data), s, c.typ)
				} else {
					err = Check(bytes.NewReader(c.data), int64(len(c.data)), c.typ)
				}
				if c.reason == "" {
					if err != nil {
						t.Fatalf("scanned=%v: refused: %v", scanned, err)
					}
					continue
				}
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("scanned=%v: got %v, want a sniff.Error with %q", scanned, err, c.reason)
				}
			}
		})
	}
}

func slices(b []byte, n int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			k := min(n, len(b))
			if !yield(b[:k]) {
				return
			}
			b = b[k:]
		}
	}
}

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("disk on fire") }

func TestCheckReadError(t *testing.T) {
	for _, typ := range []report.FileType{report.PDF, report.PPT, report.PPTX, report.HTML} {
		if err := Check(failingReader{}, 100, typ); !errors.Is(err, ErrRead) {
			t.Errorf("%s: got %v, want ErrRead", typ, err)
		}
	}
}

func TestImageExt(t *testing.T) {
	for head, want := range map[string]string{
		"\x89PNG\r\n\x1a\n....":        ".png",
		"\xFF\xD8\xFF\xE0":             ".jpg",
		"GIF89a..":                     ".gif",
		"GIF87a..":                     ".gif",
		"RIFF\x00\x00\x00\x00WEBPVP8 ": ".webp",
		"RIFF\x00\x00\x00\x00WAVE":     "",
		"%PDF-1.7":                     "",
		"":                             "",
	} {
		if got := ImageExt([]byte(head)); got != want {
			t.Errorf("ImageExt(%q) = %q, want %q", head, got, want)
		}
	}
}
