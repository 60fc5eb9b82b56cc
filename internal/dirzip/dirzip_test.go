package dirzip

import (
	"archive/tar"
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

	"github.com/klauspost/compress/zstd"
)

func write(t testing.TB, dir, name, content string) {
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

func archiveOf(t *testing.T, tr *Tree) ([]byte, Result) {
	t.Helper()
	var b bytes.Buffer
	res, err := tr.WriteTo(&b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ArchiveBytes != int64(b.Len()) {
		t.Fatalf("ArchiveBytes %d, wrote %d", res.ArchiveBytes, b.Len())
	}
	return b.Bytes(), res
}

// entry is one entry of an archive read back.
type entry struct {
	h    *tar.Header
	body []byte
}

// readBack decodes a tar.zst as the server does (a window of at most
// 32 MiB), checking on the way that it is one zstd frame with a checksum.
func readBack(t *testing.T, b []byte) []entry {
	t.Helper()
	oneFrame(t, b)
	zr, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderMaxWindow(32<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after %d entries: %v", len(out), err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		out = append(out, entry{h, body})
	}
	// Nothing after the tar's end but its zero blocks.
	if rest, err := io.ReadAll(zr); err != nil || len(bytes.Trim(rest, "\x00")) != 0 {
		t.Fatalf("after the tar: %d bytes, %v", len(rest), err)
	}
	return out
}

// oneFrame walks the zstd frame's blocks (RFC 8878, 3.1.1.2): the last one
// and the 4-byte checksum must end the stream exactly.
func oneFrame(t *testing.T, b []byte) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		t.Fatalf("no zstd magic: % x", b[:min(4, len(b))])
	}
	var h zstd.Header
	rest, err := h.DecodeAndStrip(b)
	if err != nil {
		t.Fatal(err)
	}
	// An archive smaller than one block is written as a single segment,
	// whose window is its size.
	win := h.WindowSize
	if h.SingleSegment {
		win = h.FrameContentSize
	}
	if !h.HasCheckSum || win == 0 || win > 8<<20 || h.DictionaryID != 0 {
		t.Fatalf("frame header %+v; want a checksum and a window of 8 MiB at most", h)
	}
	for blocks := 1; ; blocks++ {
		if len(rest) < 3 {
			t.Fatalf("block %d: stream cut", blocks)
		}
		bh := uint32(rest[0]) | uint32(rest[1])<<8 | uint32(rest[2])<<16
		last, typ, size := bh&1 == 1, (bh>>1)&3, int(bh>>3)
		if typ == 1 { // RLE: one byte stands for size bytes
			size = 1
		}
		if typ == 3 || len(rest) < 3+size {
			t.Fatalf("block %d: type %d, %d bytes, %d left", blocks, typ, size, len(rest)-3)
		}
		rest = rest[3+size:]
		if last {
			break
		}
	}
	if len(rest) != 4 {
		t.Fatalf("%d bytes after the frame's last block, want its 4-byte checksum only", len(rest))
	}
}

func TestSameBytesSortedFixedTimes(t *testing.T) {
	dir := site(t)
	tr, err := Scan(dir, Options{Hash: true})
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
	one, res1 := archiveOf(t, tr)

	// Different mtimes and a fresh scan: the very same bytes.
	later := time.Now().Add(time.Hour)
	for _, n := range want {
		if err := os.Chtimes(filepath.Join(dir, n), later, later); err != nil {
			t.Fatal(err)
		}
	}
	tr2, err := Scan(dir, Options{Hash: true})
	if err != nil {
		t.Fatal(err)
	}
	two, res2 := archiveOf(t, tr2)
	if !bytes.Equal(one, two) || res1 != res2 {
		t.Fatal("two archives of the same files differ")
	}
	// The same files copied into another folder give the same bytes too.
	other := t.TempDir()
	for _, n := range want {
		b, _ := os.ReadFile(filepath.Join(dir, n))
		write(t, other, n, string(b))
	}
	tr3, err := Scan(other, Options{Hash: true})
	if err != nil {
		t.Fatal(err)
	}
	if three, _ := archiveOf(t, tr3); !bytes.Equal(one, three) {
		t.Fatal("a copy of the folder gives other bytes")
	}

	entries := readBack(t, one)
	var total int64
	for i, e := range entries {
		h := e.h
		if i < len(want) && h.Name != want[i] {
			t.Errorf("entry %d is %q, want %q", i, h.Name, want[i])
		}
		if h.Typeflag != tar.TypeReg || h.Mode != 0o644 || !h.ModTime.Equal(Epoch) {
			t.Errorf("%s: type %q, mode %o, modified %v; want a regular file, 0644, %v", h.Name, h.Typeflag, h.Mode, h.ModTime, Epoch)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.AccessTime.IsZero() || !h.ChangeTime.IsZero() || len(h.PAXRecords) != 0 {
			t.Errorf("%s: owner %d/%d %q/%q, times %v %v, PAX %v; want none", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.AccessTime, h.ChangeTime, h.PAXRecords)
		}
		disk, _ := os.ReadFile(filepath.Join(dir, h.Name))
		if !bytes.Equal(e.body, disk) || h.Size != int64(len(disk)) {
			t.Errorf("%s: content differs (size %d, on disk %d)", h.Name, h.Size, len(disk))
		}
		total += int64(len(e.body))
	}
	if len(entries) != len(want) || total != tr.Bytes || res1.Bytes != tr.Bytes {
		t.Errorf("%d entries, %d bytes (tree %d, result %d)", len(entries), total, tr.Bytes, res1.Bytes)
	}
	if h, err := tr.Hash(); err != nil || h != res1.SHA256 {
		t.Errorf("Hash %s %v, the archive's tree hash %s", h, err, res1.SHA256)
	}
	// Without Options.Hash: the same archive, and no tree hash.
	plain, err := Scan(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pb bytes.Buffer
	if res, err := plain.WriteTo(&pb, nil); err != nil || res.SHA256 != "" || !bytes.Equal(pb.Bytes(), one) {
		t.Errorf("unhashed tree: %+v %v", res, err)
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
	want, _ := archiveOf(t, tr)
	var read int64
	var done Result
	rc := tr.Open(func(r io.Reader) io.Reader { return countingReader{r, &read} }, func(r Result, err error) { done = r })
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Open: %v, %d bytes, want %d", err, len(got), len(want))
	}
	if atomic.LoadInt64(&read) != tr.Bytes || done.ArchiveBytes != int64(len(want)) {
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
	b, _ := archiveOf(t, tr)
	copied := false
	for _, e := range readBack(t, b) {
		if e.h.Name == "css/copy.html" {
			copied = e.h.Typeflag == tar.TypeReg && string(e.body) == "<h1>index</h1>"
		}
	}
	if !copied {
		t.Error("the link did not go into the archive as a copy of its file")
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
