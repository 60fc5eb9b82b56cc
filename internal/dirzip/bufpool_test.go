package dirzip

import (
	"bytes"
	"fmt"
	"testing"
)

// Every file read into memory has a pooled class, and a buffer comes back
// empty with the room asked for.
func TestBufPool(t *testing.T) {
	if 1<<maxBufShift < smallFile+readSlack {
		t.Fatalf("the largest class (%d) is below smallFile+readSlack (%d)", 1<<maxBufShift, smallFile+readSlack)
	}
	for _, n := range []int{1, 512, 4096, 4097, 6000 + readSlack, smallFile + readSlack} {
		b := getBuf(n)
		if len(b) != 0 || cap(b) < n || bufClass(n) < 0 {
			t.Fatalf("getBuf(%d): len %d cap %d class %d", n, len(b), cap(b), bufClass(n))
		}
		b = append(b, make([]byte, n)...)
		putBuf(b)
		if again := getBuf(n); len(again) != 0 || cap(again) < n {
			t.Fatalf("getBuf(%d) after a put: len %d cap %d", n, len(again), cap(again))
		}
	}
	if bufClass(smallFile*4) != -1 {
		t.Fatal("a buffer past the largest class is pooled")
	}
}

// Many more files than the window, of sizes in several classes, archived
// twice (the pools warm the second time): the same bytes both times, and
// every file reads back as it is on disk, so no buffer is given back
// while its bytes are still to be written.
func TestPooledBuffersKeepContent(t *testing.T) {
	dir := t.TempDir()
	want := map[string]string{}
	for i := range 4 * window {
		name := fmt.Sprintf("p/%04d.html", i)
		want[name] = pageText(i, 100+i*97%20000)
		write(t, dir, name, want[name])
	}
	tr, err := Scan(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := archiveOf(t, tr)
	second, _ := archiveOf(t, tr)
	if !bytes.Equal(first, second) {
		t.Fatal("the second archive differs from the first")
	}
	got := readBack(t, second)
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for _, e := range got {
		if want[e.h.Name] != string(e.body) {
			t.Fatalf("%s reads back %d bytes that differ from the file's %d", e.h.Name, len(e.body), len(want[e.h.Name]))
		}
	}
}
