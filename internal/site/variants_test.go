package site

import (
	"compress/gzip"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// TestVariants: compressible files of at least MinCompressSize get gzip
// and brotli copies (in memory and through a temp file for large ones)
// that decode to the file; small, incompressible and already-compressed
// types get none; GC keeps the copies while a manifest names them.
func TestVariants(t *testing.T) {
	e := newEnv(t)
	html := strings.Repeat("<tr><td>covered line</td><td>42</td></tr>\n", 100)
	bigJS := strings.Repeat("function f(a){return a+1}\n", 20000) // > smallFile: staged
	noise := bigBody(7, 4096)                                     // random text: compresses < 10%
	m, err := e.ingest(t, zipOf(t, files(
		"index.html", html,
		"small.css", "body{}",
		"app.js", bigJS,
		"noise.txt", noise,
		"pic.png", html, // compressible bytes, but an image type
	)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"index.html": true, "app.js": true}
	for _, f := range m.Files {
		if has := f.Gzip != nil && f.Brotli != nil; has != want[f.Path] {
			t.Errorf("%s: gzip %v br %v, want variants %v", f.Path, f.Gzip, f.Brotli, want[f.Path])
		}
		if f.Gzip == nil || f.Brotli == nil {
			continue
		}
		plain := read(t, e.store, f.Key())
		if f.Gzip.Size*10 > f.Size*9 || f.Brotli.Size*10 > f.Size*9 {
			t.Errorf("%s: variants %d/%d of %d bytes save less than 10%%", f.Path, f.Gzip.Size, f.Brotli.Size, f.Size)
		}
		gz := read(t, e.store, f.Gzip.Key())
		if int64(len(gz)) != f.Gzip.Size {
			t.Errorf("%s: gzip object %d bytes, manifest %d", f.Path, len(gz), f.Gzip.Size)
		}
		zr, err := gzip.NewReader(strings.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(zr); err != nil || string(got) != plain {
			t.Errorf("%s: gzip decodes to %d bytes (%v), want the file", f.Path, len(got), err)
		}
		br := read(t, e.store, f.Brotli.Key())
		if got, err := io.ReadAll(brotli.NewReader(strings.NewReader(br))); err != nil || string(got) != plain {
			t.Errorf("%s: brotli decodes to %d bytes (%v), want the file", f.Path, len(got), err)
		}
	}
	loaded, err := Load(ctx, e.store, "sites/1.json")
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := loaded.Lookup("index.html")
	orig, _ := m.Lookup("index.html")
	if ix.Gzip == nil || ix.Brotli == nil || *ix.Gzip != *orig.Gzip || *ix.Brotli != *orig.Brotli {
		t.Errorf("loaded manifest lost the variants: %+v", ix)
	}

	// GC long after: every object stays while the manifest lives...
	later := func() time.Time { return time.Now().Add(48 * time.Hour) }
	before := e.keys(t, ObjectPrefix)
	if st, err := GC(ctx, e.store, GCOptions{Now: later}); err != nil || st.Removed != 0 {
		t.Fatalf("GC with the manifest = %+v, %v", st, err)
	}
	if len(before) != 4+4 {
		t.Errorf("objects = %d, want 4 distinct files (pic.png is index.html's bytes) + 4 variants", len(before))
	}
	// ... and all go with it.
	if err := Delete(ctx, e.store, "sites/1.json"); err != nil {
		t.Fatal(err)
	}
	if st, err := GC(ctx, e.store, GCOptions{Now: later}); err != nil || st.Removed != len(before) {
		t.Fatalf("GC after delete = %+v, %v; want %d removed", st, err, len(before))
	}
}

// TestVariantsDeterministic: the same file yields the same variant keys,
// so a second upload stores no new object.
func TestVariantsDeterministic(t *testing.T) {
	e := newEnv(t)
	body := strings.Repeat("<p>same page</p>\n", 200)
	m1, err := e.ingest(t, zipOf(t, files("index.html", body)), Options{ManifestKey: "sites/1.json"})
	if err != nil {
		t.Fatal(err)
	}
	before := e.keys(t, ObjectPrefix)
	m2, err := e.ingest(t, zipOf(t, files("index.html", body)), Options{ManifestKey: "sites/2.json"})
	if err != nil {
		t.Fatal(err)
	}
	if after := e.keys(t, ObjectPrefix); !slices.Equal(before, after) {
		t.Errorf("second upload stored new objects: %q -> %q", before, after)
	}
	if *m1.Files[0].Gzip != *m2.Files[0].Gzip || *m1.Files[0].Brotli != *m2.Files[0].Brotli {
		t.Errorf("variants differ: %+v %+v", m1.Files[0], m2.Files[0])
	}
}
