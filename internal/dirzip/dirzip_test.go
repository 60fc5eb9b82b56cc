package dirzip

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// site writes a small coverage-like site with names whose walk order and
// sorted order differ ("a-b.html" sorts before "a/").
func site(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir, "index.html", "<h1>index</h1>")
	write(t, dir, "a/z.html", strings.Repeat("<p>z</p>", 500))
	write(t, dir, "a-b.html", "<p>a-b</p>")
	write(t, dir, "css/style.css", "h1{color:red}")
	write(t, dir, "img/logo.png", "\x89PNG not really")
	write(t, dir, ".nojekyll", "")
	return dir
}

func zipOf(t *testing.T, tr *Tree) ([]byte, Result) {
	t.Helper()
	var b bytes.Buffer
	res, err := tr.WriteTo(&b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ZipBytes != int64(b.Len()) {
		t.Fatalf("ZipBytes %d, wrote %d", res.ZipBytes, b.Len())
	}
	return b.Bytes(), res
}

func TestSameBytesSortedFixedTimes(t *testing.T) {
	dir := site(t)
	tr, err := Scan(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".nojekyll", "a-b.html", "a/z.html", "css/style.css", "img/logo.png", "index.html"}
	var names []string
	for _, f := range tr.Files {
		names = append(names, f.Name)
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("files %q, want %q (hidden files included, sorted bytewise)", names, want)
	}
	one, res1 := zipOf(t, tr)

	// Different mtimes and a fresh scan: the very same bytes.
	later := time.Now().Add(time.Hour)
	for _, n := range want {
		if err := os.Chtimes(filepath.Join(dir, n), later, later); err != nil {
			t.Fatal(err)
		}
	}
	tr2, err := Scan(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	two, res2 := zipOf(t, tr2)
	if !bytes.Equal(one, two) || res1 != res2 {
		t.Fatal("two zips of the same files differ")
	}
	// The same files copied into another folder zip the same too.
	other := t.TempDir()
	for _, n := range want {
		b, _ := os.ReadFile(filepath.Join(dir, n))
		write(t, other, n, string(b))
	}
	tr3, err := Scan(other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if three, _ := zipOf(t, tr3); !bytes.Equal(one, three) {
		t.Fatal("a copy of the folder zips differently")
	}

	zr, err := zip.NewReader(bytes.NewReader(one), int64(len(one)))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for i, f := range zr.File {
		if f.Name != want[i] {
			t.Errorf("entry %d is %q, want %q", i, f.Name, want[i])
		}
		if !f.Modified.Equal(Epoch) {
			t.Errorf("%s: modified %v, want %v", f.Name, f.Modified, Epoch)
		}
		if f.Mode() != 0o644 {
			t.Errorf("%s: mode %v", f.Name, f.Mode())
		}
		// Deflated when that makes the entry smaller and the type is not
		// compressed already; stored otherwise.
		wantMethod := zip.Store
		if f.Name == "a/z.html" {
			wantMethod = zip.Deflate
		}
		if f.Method != wantMethod {
			t.Errorf("%s: method %d, want %d", f.Name, f.Method, wantMethod)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		disk, _ := os.ReadFile(filepath.Join(dir, f.Name))
		if !bytes.Equal(got, disk) {
			t.Errorf("%s: content differs", f.Name)
		}
		total += int64(len(got))
	}
	if len(zr.File) != len(want) || total != tr.Bytes || res1.Bytes != tr.Bytes {
		t.Errorf("%d entries, %d bytes (tree %d, result %d)", len(zr.File), total, tr.Bytes, res1.Bytes)
	}
	if h, err := tr.Hash(); err != nil || h != res1.SHA256 {
		t.Errorf("Hash %s %v, zip's tree hash %s", h, err, res1.SHA256)
	}

	// Changed content: another hash.
	write(t, dir, "css/style.css", "h1{color:blue}")
	if h, _ := tr.Hash(); h == res1.SHA256 {
		t.Error("the tree hash did not change with the content")
	}
}

func TestOpenStreamsAndStopsEarly(t *testing.T) {
	dir := site(t)
	tr, err := Scan(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := zipOf(t, tr)
	var read int64
	var done Result
	rc := tr.Open(func(r io.Reader) io.Reader { return countingReader{r, &read} }, func(r Result, err error) { done = r })
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Open: %v, %d bytes, want %d", err, len(got), len(want))
	}
	if atomic.LoadInt64(&read) != tr.Bytes || done.ZipBytes != int64(len(want)) {
		t.Fatalf("wrap saw %d bytes (want %d); done %+v", read, tr.Bytes, done)
	}
	// A reader that gives up: the writer ends with an error, not a leak.
	errc := make(chan error, 1)
	rc = tr.Open(nil, func(_ Result, err error) { errc <- err })
	rc.Read(make([]byte, 10))
	rc.Close()
	if err := <-errc; !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("after an early close: %v", err)
	}
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	atomic.AddInt64(c.n, int64(n)) // wrap is called from several goroutines
	return n, err
}

func TestSymlinks(t *testing.T) {
	dir := site(t)
	// A link to a file inside: followed, stored under the link's name.
	if err := os.Symlink("../index.html", filepath.Join(dir, "css", "copy.html")); err != nil {
		t.Fatal(err)
	}
	tr, err := Scan(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var found *File
	for i := range tr.Files {
		if tr.Files[i].Name == "css/copy.html" {
			found = &tr.Files[i]
		}
	}
	if found == nil || !found.Link || found.Size != int64(len("<h1>index</h1>")) {
		t.Fatalf("link inside: %+v", found)
	}
	b, _ := zipOf(t, tr)
	zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	for _, f := range zr.File {
		if f.Name == "css/copy.html" && f.Mode()&os.ModeSymlink != 0 {
			t.Error("the link went into the zip as a link")
		}
	}

	outside := filepath.Join(t.TempDir(), "secret.txt")
	write(t, filepath.Dir(outside), "secret.txt", "secret")
	cases := map[string]struct {
		target string
		want   string
	}{
		"out.html":    {outside, "leads outside the folder or nowhere"},
		"up.html":     {"../../../../../../../../../../etc/hostname", "leads outside the folder or nowhere"},
		"broken.html": {"nothing-here", "leads outside the folder or nowhere"},
		"folder":      {"css", "a symbolic link to a folder"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d := site(t)
			link := filepath.Join(d, "a", name)
			target := c.target
			if target == "css" {
				target = "../css"
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			_, err := Scan(d, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), link) {
				t.Fatalf("Scan: %v; want an error naming %s: %s", err, link, c.want)
			}
		})
	}
}

func TestRefusesSpecialFiles(t *testing.T) {
	dir := site(t)
	fifo := filepath.Join(dir, "a", "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	_, err := Scan(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("Scan with a fifo: %v", err)
	}
}

func TestExcludeAndCheckName(t *testing.T) {
	dir := site(t)
	write(t, dir, ".done", "")
	tr, err := Scan(dir, Options{Exclude: func(n string) bool { return n == ".done" }})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range tr.Files {
		if f.Name == ".done" {
			t.Fatal("excluded file scanned")
		}
	}
	write(t, dir, `a/back\slash.html`, "x")
	_, err = Scan(dir, Options{CheckName: func(n string) error {
		if strings.Contains(n, `\`) {
			return errors.New("backslash")
		}
		return nil
	}})
	if err == nil || !strings.Contains(err.Error(), `back\slash.html: backslash`) {
		t.Fatalf("CheckName: %v", err)
	}
}

func TestFileChangedIntoLinkAfterScan(t *testing.T) {
	dir := site(t)
	tr, err := Scan(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "index.html")
	os.Remove(victim)
	if err := os.Symlink("/etc/passwd", victim); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.WriteTo(io.Discard, nil); err == nil || !strings.Contains(err.Error(), victim) {
		t.Fatalf("a file swapped for a link outside after the scan: %v", err)
	}
}
