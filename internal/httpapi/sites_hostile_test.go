package httpapi_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
)

// rawZip writes a zip whose entries are given as headers (modes, names
// the zip package would not produce by itself).
func rawZip(t testing.TB, entries ...struct {
	h    zip.FileHeader
	data []byte
}) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		h := e.h
		w, err := zw.CreateHeader(&h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type zipEntry = struct {
	h    zip.FileHeader
	data []byte
}

func zfile(name string, data []byte) zipEntry {
	return zipEntry{zip.FileHeader{Name: name, Method: zip.Deflate}, data}
}

func zsymlink(name, target string) zipEntry {
	h := zip.FileHeader{Name: name, Method: zip.Store}
	h.SetMode(fs.ModeSymlink | 0o777)
	return zipEntry{h, []byte(target)}
}

// rawTar writes a tar of the given headers; regular files get data.
func rawTar(t testing.TB, hs ...*tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range hs {
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func reg(name string, size int64) *tar.Header {
	return &tar.Header{Name: name, Typeflag: tar.TypeReg, Size: size}
}

// tree lists every file and folder below dir (slash paths).
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		r, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(r))
		return nil
	})
	sort.Strings(out)
	return out
}

// TestSiteHostileArchives: every hostile or broken upload is refused whole
// with the spec's error body naming the problem, stores nothing (no row,
// no manifest, no content object, nothing left in tmp/) and writes
// nothing outside the data directory.
func TestSiteHostileArchives(t *testing.T) {
	parent := t.TempDir()
	dataDir := filepath.Join(parent, "data")
	e := startSites(t, apitest.Options{DataDir: dataDir, Config: func(c *config.Config) {
		c.Sites.MaxBytes = 4 << 20 // absolute bombs: small limits through the config
	}})
	p := e.CreateProject("hostile")
	zeros := bytes.Repeat([]byte{0}, 8<<20)
	random := make([]byte, 5<<20)
	rand.Read(random)
	ok := zfile("index.html", []byte("<p>"))
	whole := zipOf(t, htmlcov...)

	cases := []struct {
		name  string
		file  string
		data  []byte
		kind  report.Kind
		says  string
		extra []apitest.Part
	}{
		{"zip-slip", "a.zip", rawZip(t, ok, zfile("../../evil.html", []byte("pwned"))), report.Validation, "dot segment", nil},
		{"zip-slip inside", "a.zip", rawZip(t, ok, zfile("a/../../evil.html", []byte("pwned"))), report.Validation, "dot segment", nil},
		{"absolute path", "a.zip", rawZip(t, ok, zfile("/tmp/evil.html", []byte("pwned"))), report.Validation, "absolute path", nil},
		{"backslash", "a.zip", rawZip(t, ok, zfile(`..\..\evil.html`, []byte("pwned"))), report.Validation, "backslash", nil},
		{"drive letter", "a.zip", rawZip(t, ok, zfile("C:/evil.html", []byte("pwned"))), report.Validation, "drive letter", nil},
		{"NUL", "a.zip", rawZip(t, ok, zfile("a\x00.html", []byte("pwned"))), report.Validation, "control character", nil},
		{"bidi override", "a.zip", rawZip(t, ok, zfile("rep\u202elmth.pdf.html", []byte("x"))), report.Validation, "invisible format character U+202E RIGHT-TO-LEFT OVERRIDE", nil},
		{"zero-width folder", "a.tar", rawTar(t, reg("index.html", 3), reg("css\u200b/a.css", 1)), report.Validation, "invisible format character U+200B ZERO WIDTH SPACE", nil},
		{"zip symlink", "a.zip", rawZip(t, ok, zsymlink("link.html", "/etc/passwd")), report.Validation, "symbolic link", nil},
		{"tar symlink", "a.tar", rawTar(t, reg("index.html", 3), &tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}), report.Validation, "symbolic link", nil},
		{"tar hardlink", "a.tar", rawTar(t, reg("index.html", 3), &tar.Header{Name: "hard", Typeflag: tar.TypeLink, Linkname: "index.html"}), report.Validation, "hard link", nil},
		{"tar device", "a.tar", rawTar(t, reg("index.html", 3), &tar.Header{Name: "dev/null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}), report.Validation, "device file", nil},
		{"tar.gz device", "a.tgz", gz(t, rawTar(t, reg("index.html", 3), &tar.Header{Name: "sda", Typeflag: tar.TypeBlock, Devmajor: 8})), report.Validation, "device file", nil},
		{"tar fifo", "a.tar", rawTar(t, reg("index.html", 3), &tar.Header{Name: "pipe", Typeflag: tar.TypeFifo}), report.Validation, "named pipe", nil},
		{"duplicate", "a.zip", rawZip(t, ok, zfile("index.html", []byte("again"))), report.Validation, "duplicate file name", nil},
		{"case collision", "a.zip", rawZip(t, ok, zfile("INDEX.html", []byte("x"))), report.Validation, "differ only in case", nil},
		{"folder case collision", "a.zip", rawZip(t, zfile("A/x.html", nil), zfile("a/y.html", nil)), report.Validation, "differ only in case", nil},
		{"file and folder", "a.zip", rawZip(t, zfile("a", nil), zfile("a/b.html", nil)), report.Validation, "both a file and", nil},
		{"ratio bomb zip", "a.zip", rawZip(t, ok, zfile("zeros.bin", zeros)), report.Validation, "compression bombs", nil},
		{"ratio bomb tar.gz", "a.tar.gz", gz(t, rawTar(t, reg("index.html", 3), reg("zeros.bin", 8<<20))), report.Validation, "compression bombs", nil},
		{"absolute bomb", "a.zip", rawZip(t, ok, zfile("big.bin", random)), report.PayloadTooLarge, "expands to more than 4194304 bytes", nil},
		{"absolute bomb tar", "a.tar", rawTar(t, reg("index.html", 3), reg("big.bin", 5<<20)), report.PayloadTooLarge, "expands to more than 4194304 bytes", nil},
		{"truncated zip", "a.zip", whole[:len(whole)/2], report.Validation, "zip archive", nil},
		{"zip cut before its directory", "a.zip", whole[:len(whole)-30], report.Validation, "zip", nil},
		{"truncated tar.gz", "a.tgz", func() []byte { b := gz(t, tarOf(t, htmlcov...)); return b[:len(b)-12] }(), report.Validation, "damaged or truncated", nil},
		{"truncated tar", "a.tar", func() []byte { b := tarOf(t, entry{"index.html", strings.Repeat("x", 5000)}); return b[:2000] }(), report.Validation, "damaged or truncated", nil},
		{"empty zip", "a.zip", rawZip(t), report.Validation, "holds no files", nil},
		{"zip declared pdf", "a.zip", whole, report.Validation, "a site takes fileType html", []apitest.Part{formField("fileType", "pdf")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parts := []apitest.Part{formField("projectId", fmt.Sprint(p.ID))}
			if c.extra != nil {
				parts = append(parts, c.extra...)
			} else {
				parts = append(parts, formField("fileType", "html"))
			}
			parts = append(parts, apitest.Part{Name: "file", FileName: c.file, Data: c.data})
			body, ct := apitest.Multipart(parts...)
			r := e.Do("POST", "/api/reports", body, ct)
			wantError(t, r, c.kind)
			if msg := errorText(t, r); !strings.Contains(msg, c.says) {
				t.Fatalf("error %q, want it to say %q", msg, c.says)
			}
			assertNothingStored(t, e, p.ID, parent)
		})
	}
}

// TestSiteTooManyEntries: one entry over the default limit (100,000) is
// refused, as a zip and as a tar.gz.
func TestSiteTooManyEntries(t *testing.T) {
	parent := t.TempDir()
	e := startSites(t, apitest.Options{DataDir: filepath.Join(parent, "data")})
	p := e.CreateProject("many")
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := range 100_001 {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("f/%d.txt", i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	r := uploadSite(t, e, p.ID, apitest.Part{Name: "file", FileName: "many.zip", Data: b.Bytes()})
	wantError(t, r, report.PayloadTooLarge)
	if msg := errorText(t, r); !strings.Contains(msg, "more than 100000 entries") {
		t.Fatalf("error %q", msg)
	}
	assertNothingStored(t, e, p.ID, parent)

	// The same as a tar (no central directory: counted while read).
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for i := range 100_001 {
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("%d", i), Typeflag: tar.TypeReg, Mode: 0o644})
	}
	tw.Close()
	r = uploadSite(t, e, p.ID, apitest.Part{Name: "file", FileName: "many.tar", Data: gz(t, tb.Bytes())})
	wantError(t, r, report.PayloadTooLarge)
	assertNothingStored(t, e, p.ID, parent)
}

// TestSitePartsLimits: multi-part sites within configured limits: too
// many parts, too many bytes, hostile part names.
func TestSitePartsLimits(t *testing.T) {
	parent := t.TempDir()
	e := startSites(t, apitest.Options{DataDir: filepath.Join(parent, "data"), Config: func(c *config.Config) {
		c.Sites.MaxEntries, c.Sites.MaxBytes = 3, 1000
	}})
	p := e.CreateProject("parts")
	part := func(name string, n int) apitest.Part {
		return apitest.Part{Name: "file", FileName: name, Data: bytes.Repeat([]byte("a"), n)}
	}
	for _, c := range []struct {
		name  string
		parts []apitest.Part
		kind  report.Kind
		says  string
	}{
		{"too many parts", []apitest.Part{part("index.html", 1), part("a", 1), part("b", 1), part("c", 1)}, report.PayloadTooLarge, "more than 3 entries"},
		{"too many bytes", []apitest.Part{part("index.html", 600), part("a", 600)}, report.PayloadTooLarge, "more than 1000 bytes"},
		{"dot-dot name", []apitest.Part{part("index.html", 1), part("../evil", 1)}, report.Validation, "dot segment"},
		{"absolute name", []apitest.Part{part("index.html", 1), part("/etc/evil", 1)}, report.Validation, "absolute path"},
		{"backslash name", []apitest.Part{part("index.html", 1), part(`a\b`, 1)}, report.Validation, "backslash"},
		{"duplicate name", []apitest.Part{part("index.html", 1), part("index.html", 1)}, report.Validation, "duplicate"},
		{"case collision", []apitest.Part{part("index.html", 1), part("Index.HTML", 1)}, report.Validation, "differ only in case"},
		{"not html", append([]apitest.Part{formField("fileType", "md")}, part("a.md", 1), part("b.md", 1)), report.Validation, "a site report takes fileType html"},
	} {
		t.Run(c.name, func(t *testing.T) {
			all := []apitest.Part{formField("projectId", fmt.Sprint(p.ID))}
			if c.parts[0].FileName == "" {
				all = append(all, c.parts...)
			} else {
				all = append(append(all, formField("fileType", "html")), c.parts...)
			}
			body, ct := apitest.Multipart(all...)
			r := e.Do("POST", "/api/reports", body, ct)
			wantError(t, r, c.kind)
			if msg := errorText(t, r); !strings.Contains(msg, c.says) {
				t.Fatalf("error %q, want it to say %q", msg, c.says)
			}
			assertNothingStored(t, e, p.ID, parent)
		})
	}
	// Within the limits (empty parts included) the site is stored.
	rep := mustSite(t, uploadSite(t, e, p.ID, part("index.html", 500), part("a.css", 500), part("empty.js", 0)))
	if rep.Files != 3 || rep.Bytes != 1000 {
		t.Fatalf("at the limits: %+v", rep)
	}
}

// assertNothingStored: no report in project, no site object, nothing in
// tmp/, and nothing beside the data directory in parent.
func assertNothingStored(t *testing.T, e *apitest.Env, project int64, parent string) {
	t.Helper()
	if rs, err := e.Svc.ListReports(t.Context(), &project); err != nil || len(rs) != 0 {
		t.Fatalf("reports stored: %v %v", rs, err)
	}
	if cas, man := storedObjects(t, e.DataDir); len(cas) != 0 || len(man) != 0 {
		t.Fatalf("objects stored: %v manifests %v", cas, man)
	}
	if left := tree(t, filepath.Join(e.DataDir, "tmp")); len(left) != 1 {
		t.Fatalf("tmp/ keeps %v", left)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(e.DataDir) {
		var names []string
		for _, d := range entries {
			names = append(names, d.Name())
		}
		t.Fatalf("written beside the data directory: %v", names)
	}
	for _, p := range tree(t, e.DataDir) {
		if strings.Contains(p, "evil") || strings.Contains(p, "link") || strings.Contains(p, "dev") {
			t.Fatalf("a hostile name reached the disk: %s", p)
		}
	}
}
