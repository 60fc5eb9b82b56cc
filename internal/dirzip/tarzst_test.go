package dirzip

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// pageText is HTML-like text of about size bytes, different for each seed
// (line numbers and identifiers change, as in a coverage report's pages).
func pageText(seed, size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "<p class=\"run\"><span class=\"n\"><a id=\"t%d\" href=\"#t%d\">%d</a></span>"+
			"<span class=\"t\">    value_%d = compute(%d, name=\"m%d\")&nbsp;</span></p>\n", i, i, i, seed*31+i, i*seed%977, seed)
	}
	return b.String()
}

// noise is size bytes that do not compress (a xorshift sequence), so that
// a large file spans many zstd blocks of its own.
func noise(seed uint64, size int) string {
	b := make([]byte, size)
	x := seed | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return string(b)
}

// bigSite is the small site plus a 2 MiB file (streamed, not read into
// memory) and enough pages for the archive to span many blocks.
func bigSite(t *testing.T) string {
	dir := site(t)
	write(t, dir, "data/big.bin", noise(7, 2<<20))
	for i := range 40 {
		write(t, dir, fmt.Sprintf("pages/m%03d.html", i), pageText(i, 6000))
	}
	return dir
}

func TestSameBytesWhateverGOMAXPROCSAndConcurrency(t *testing.T) {
	tr, err := Scan(bigSite(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var outs [][]byte
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		b, _ := archiveOf(t, tr)
		outs = append(outs, b)
	}
	// The encoder's concurrency is pinned anyway; other values give the
	// same bytes today, which is what makes the constant a safe choice.
	for _, c := range []int{2, 4} {
		var b bytes.Buffer
		if _, err := tr.writeTo(&b, nil, c); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b.Bytes())
	}
	for i, b := range outs[1:] {
		if !bytes.Equal(b, outs[0]) {
			t.Fatalf("archive %d differs from the first (%d vs %d bytes)", i+1, len(b), len(outs[0]))
		}
	}
	// The big file's bytes do not compress: the archive spans many blocks.
	if len(outs[0]) < 2<<20 {
		t.Fatalf("archive of %d bytes; the test wants a multi-block frame", len(outs[0]))
	}
	readBack(t, outs[0])
}

func TestLongAndUnicodeNames(t *testing.T) {
	names := []struct {
		name   string
		format tar.Format // as archive/tar picks it
	}{
		{strings.Repeat("n", 145) + ".html", tar.FormatPAX},                                           // 150 bytes, no slash to split at
		{"deep/" + strings.Repeat("d", 60) + "/" + strings.Repeat("f", 80) + ".css", tar.FormatUSTAR}, // 150 bytes, split at a slash
		{strings.Repeat("p", 120) + "/" + strings.Repeat("q", 120) + ".js", tar.FormatPAX},            // no split fits
		{"café/naïve.html", tar.FormatPAX},                                                            // not ASCII
	}
	fill := func(dir string) *Tree {
		write(t, dir, "index.html", "<h1>index</h1>")
		for i, n := range names {
			write(t, dir, n.name, pageText(i, 100+i))
		}
		tr, err := Scan(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tr := fill(t.TempDir())
	one, _ := archiveOf(t, tr)
	// The same files in another folder: the same bytes (PAX records carry
	// the name only, no times).
	if two, _ := archiveOf(t, fill(t.TempDir())); !bytes.Equal(one, two) {
		t.Fatal("two archives of the same files with long names differ")
	}
	got := map[string]entry{}
	for _, e := range readBack(t, one) {
		got[e.h.Name] = e
	}
	for i, n := range names {
		e, ok := got[n.name]
		if !ok || string(e.body) != pageText(i, 100+i) || e.h.Format != n.format {
			t.Errorf("%q (%d bytes): found %v, format %v (want %v), content ok %v",
				n.name, len(n.name), ok, e.h.Format, n.format, ok && string(e.body) == pageText(i, 100+i))
		}
	}
	if len(got) != len(tr.Files) {
		t.Errorf("%d entries for %d files", len(got), len(tr.Files))
	}
}

func TestLargeFileStreamed(t *testing.T) {
	dir := bigSite(t)
	tr, err := Scan(dir, Options{Hash: true})
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	rc := tr.Open(func(r io.Reader) io.Reader { return countingReader{r, &read} }, nil)
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if read != tr.Bytes {
		t.Errorf("the progress hook saw %d bytes of %d", read, tr.Bytes)
	}
	big, _ := os.ReadFile(filepath.Join(dir, "data", "big.bin"))
	found := false
	for _, e := range readBack(t, b) {
		if e.h.Name == "data/big.bin" {
			found = bytes.Equal(e.body, big) && e.h.Size == 2<<20
		}
	}
	if !found {
		t.Fatal("the 2 MiB file did not come back whole")
	}
	want, _ := tr.Hash()
	if _, res := archiveOf(t, tr); res.SHA256 != want || res.Bytes != tr.Bytes {
		t.Fatalf("result %+v; tree hash %s, %d bytes", res, want, tr.Bytes)
	}
}

// TestFileChangedWhileRead changes a file once the writer has opened it
// (the progress hook runs then): the archive fails, naming the file,
// instead of carrying a cut or padded entry.
func TestFileChangedWhileRead(t *testing.T) {
	cases := []struct {
		name, file string
		change     func(path string) error
		want       string
	}{
		{"large grew", "data/big.bin", func(p string) error { return appendTo(p, "more") }, "grew while being read"},
		{"large shrank", "data/big.bin", func(p string) error { return os.Truncate(p, 1<<20) }, "shrank while being read"},
		{"small grew past the limit", "index.html", func(p string) error { return appendTo(p, noise(3, smallFile)) }, "grew past its size at scan time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := bigSite(t)
			tr, err := Scan(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, filepath.FromSlash(c.file))
			var once atomic.Bool
			wrap := func(r io.Reader) io.Reader {
				if f, ok := r.(*os.File); ok && filepath.Clean(f.Name()) == path && once.CompareAndSwap(false, true) {
					if err := c.change(path); err != nil {
						t.Error(err)
					}
				}
				return r
			}
			_, err = tr.WriteTo(io.Discard, wrap)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("WriteTo: %v; want an error naming %s: %s", err, path, c.want)
			}
		})
	}
}

func appendTo(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestOpenStopsEarlyMidStream closes the stream while the writer is in the
// middle of the large file: the writer ends with the pipe's error.
func TestOpenStopsEarlyMidStream(t *testing.T) {
	tr, err := Scan(bigSite(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	rc := tr.Open(nil, func(_ Result, err error) { errc <- err })
	if _, err := io.ReadFull(rc, make([]byte, 100<<10)); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if err := <-errc; !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("after an early close: %v", err)
	}
}
