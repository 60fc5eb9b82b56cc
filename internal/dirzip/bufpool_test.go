package dirzip

import (
	"bytes"
	"fmt"
	"testing"
)

// The classes: 4 KiB up to 64 KiB by powers of two, the buffer exactly
// the class's size; anything else gets a buffer of its own size and is
// not kept.
func TestBufPool(t *testing.T) {
	for _, c := range []struct{ n, class, cap int }{
		{1, 0, 4 << 10}, {4 << 10, 0, 4 << 10}, {4<<10 + 1, 1, 8 << 10}, {6000 + readSlack, 1, 8 << 10},
		{32 << 10, 3, 32 << 10}, {64 << 10, 4, 64 << 10}, {64<<10 + 1, -1, 64<<10 + 1}, {smallFile + readSlack, -1, smallFile + readSlack},
	} {
		b := bufs.Get(c.n)
		if got := bufs.Class(c.n); got != c.class || len(b) != 0 || cap(b) != c.cap {
			t.Errorf("n %d: class %d, buffer len %d cap %d; want class %d cap %d", c.n, got, len(b), cap(b), c.class, c.cap)
		}
		bufs.Put(append(b, make([]byte, c.n)...))
		if again := bufs.Get(c.n); len(again) != 0 || cap(again) < c.n {
			t.Errorf("n %d after a put: len %d cap %d", c.n, len(again), cap(again))
		}
	}
	if bufs.Class(0) != -1 || bufs.Class(-5) != -1 {
		t.Error("a size below 1 has a class")
	}
}

// Many more files than the window, of sizes in every class and past them,
// archived four times (the pools warm after the first) with the encoder's
// concurrency at 1, 2 and 4: the same bytes every time, and every file
// reads back as it is on disk, so no buffer is given back while its bytes
// are still to be written.
func TestPooledBuffersKeepContent(t *testing.T) {
	dir := t.TempDir()
	want := map[string]string{}
	for i := range 4 * window {
		name := fmt.Sprintf("p/%04d.html", i)
		size := 100 + i*997%(70<<10) // every class, and past the largest
		if i%50 == 7 {
			size = smallFile - i // the largest read into memory
		}
		want[name] = pageText(i, size)
		write(t, dir, name, want[name])
	}
	tr, err := Scan(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var first []byte
	for _, c := range []int{1, 2, 4, 1} { // the encoder's concurrency
		var b bytes.Buffer
		if _, err := tr.writeTo(&b, nil, c); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b.Bytes()
		} else if !bytes.Equal(b.Bytes(), first) {
			t.Fatalf("the archive with concurrency %d differs from the first", c)
		}
		got := readBack(t, b.Bytes())
		if len(got) != len(want) {
			t.Fatalf("%d entries, want %d", len(got), len(want))
		}
		for _, e := range got {
			if want[e.h.Name] != string(e.body) {
				t.Fatalf("concurrency %d: %s reads back %d bytes that differ from the file's %d", c, e.h.Name, len(e.body), len(want[e.h.Name]))
			}
		}
	}
}
