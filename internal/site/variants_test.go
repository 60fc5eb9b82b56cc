package site

import (
	"compress/gzip"
	"errors"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/reportd/reportd/internal/blob"
)

// TestVariants: ingest stores no variants; MakeVariants gives compressible
// files of at least MinCompressSize gzip and brotli copies at their
// original's VariantKey (in memory, and through a temp file for large
// ones) that decode to the file; a file whose compression does not pay
// gets a marker and is not compressed again; GC keeps the copies while a
// manifest names the original and removes them with it.
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
	if ks := e.keys(t, ObjectPrefix); len(ks) != 4 {
		t.Fatalf("objects after ingest = %q, want the 4 distinct files and no variant", ks)
	}
	want := map[string]bool{"index.html": true, "app.js": true, "noise.txt": true}
	for _, f := range m.Files {
		if Wants(f) != want[f.Path] {
			t.Errorf("Wants(%s) = %v", f.Path, !want[f.Path])
		}
		if !Wants(f) {
			continue
		}
		v, err := MakeVariants(ctx, e.store, f.SHA256, e.tmp)
		if err != nil || !v.Done {
			t.Fatalf("MakeVariants(%s) = %+v, %v", f.Path, v, err)
		}
		if got, err := LookupVariants(ctx, e.store, f.SHA256); err != nil || got.Done != v.Done || !maps.Equal(got.Sizes, v.Sizes) {
			t.Errorf("LookupVariants(%s) = %+v, %v; MakeVariants said %+v", f.Path, got, err, v)
		}
		if f.Path == "noise.txt" {
			if v.Any() {
				t.Errorf("noise.txt got variants %+v", v)
			}
			continue
		}
		plain := read(t, e.store, f.Key())
		if v.Size(Gzip)*10 > f.Size*9 || v.Size(Brotli)*10 > f.Size*9 || v.Size(Gzip) == 0 || v.Size(Brotli) == 0 {
			t.Errorf("%s: variants %+v of %d bytes", f.Path, v, f.Size)
		}
		gf, bf := f, f
		gf.Encoding, bf.Encoding = Gzip, Brotli
		gz := read(t, e.store, gf.Key())
		if int64(len(gz)) != v.Size(Gzip) {
			t.Errorf("%s: gzip object %d bytes, lookup %d", f.Path, len(gz), v.Size(Gzip))
		}
		zr, err := gzip.NewReader(strings.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(zr); err != nil || string(got) != plain {
			t.Errorf("%s: gzip decodes to %d bytes (%v), want the file", f.Path, len(got), err)
		}
		br := read(t, e.store, bf.Key())
		if got, err := io.ReadAll(brotli.NewReader(strings.NewReader(br))); err != nil || string(got) != plain {
			t.Errorf("%s: brotli decodes to %d bytes (%v), want the file", f.Path, len(got), err)
		}
	}
	// The negative result is remembered: a second run stores nothing and
	// compresses nothing (the marker answers first).
	noiseF, _ := m.Lookup("noise.txt")
	before := e.keys(t, ObjectPrefix)
	if v, err := MakeVariants(ctx, e.store, noiseF.SHA256, e.tmp); err != nil || !v.Done {
		t.Fatalf("MakeVariants again = %+v, %v", v, err)
	}
	if after := e.keys(t, ObjectPrefix); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("second MakeVariants stored %q -> %q", before, after)
	}
	if len(before) != 4+2+2+1 {
		t.Errorf("objects = %q, want 4 files + 2×2 variants + 1 marker", before)
	}
	// A missing original is nothing to do.
	if v, err := MakeVariants(ctx, e.store, strings.Repeat("ab", 32), e.tmp); err != nil || v.Done || v.Any() {
		t.Errorf("MakeVariants of a missing object = %+v, %v", v, err)
	}

	// GC long after: every object stays while the manifest lives...
	later := func() time.Time { return time.Now().Add(48 * time.Hour) }
	if st, err := GC(ctx, e.store, GCOptions{Now: later}); err != nil || st.Removed != 0 {
		t.Fatalf("GC with the manifest = %+v, %v", st, err)
	}
	// ... and all go with it.
	if err := Delete(ctx, e.store, "sites/1.json"); err != nil {
		t.Fatal(err)
	}
	if st, err := GC(ctx, e.store, GCOptions{Now: later}); err != nil || st.Removed != len(before) {
		t.Fatalf("GC after delete = %+v, %v; want %d removed", st, err, len(before))
	}
	ix, _ := m.Lookup("index.html")
	ix.Encoding = Brotli
	if _, err := e.store.Stat(ctx, ix.Key()); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("variant left after GC: %v", err)
	}
}

func TestObjectSHA(t *testing.T) {
	sum := strings.Repeat("0f", 32)
	for key, want := range map[string]string{
		ObjectKey(sum):                 sum,
		VariantKey(sum, Gzip):          sum,
		VariantKey(sum, Brotli):        sum,
		ObjectKey(sum) + ".none":       sum,
		ObjectKey(sum) + ".zst":        "",
		"cas/00/" + sum:                "",
		"cas/0f/" + sum + ".gz.br":     "",
		"cas/0f/" + sum[:10]:           "",
		"sites/" + sum[:2] + "/" + sum: "",
	} {
		if got := objectSHA(key); got != want {
			t.Errorf("objectSHA(%s) = %q, want %q", key, got, want)
		}
	}
}

// TestAppendKey: AppendKey appends exactly Key, for the file and each of
// its variants (and a coding without one, whose key is the file's).
func TestAppendKey(t *testing.T) {
	f := File{Path: "a.css", SHA256: strings.Repeat("ab", 32), Size: 1}
	for _, enc := range []string{"", Gzip, Brotli, "zstd"} {
		f.Encoding = enc
		if got := string(f.AppendKey([]byte("x"))); got != "x"+f.Key() {
			t.Errorf("AppendKey with encoding %q = %q, want %q", enc, got, "x"+f.Key())
		}
	}
	f.Encoding = Brotli
	if f.Key() != VariantKey(f.SHA256, Brotli) || f.Key() == ObjectKey(f.SHA256) {
		t.Errorf("Key %q of a variant", f.Key())
	}
}

// TestVariantsOfMany: MakeVariantsOf gives the objects the copies
// MakeVariants gives each (same sizes, decoding to the file: in memory and
// through a temp file, paying or not), in two batches on the local store;
// the objects already done are left as they are, and a stop asked for
// before an object commits what was made and returns its error.
func TestVariantsOfMany(t *testing.T) {
	html := strings.Repeat("<tr><td>covered line</td><td>42</td></tr>\n", 100)
	bigJS := strings.Repeat("function f(a){return a+1}\n", 20000)
	src := files("index.html", html, "app.js", bigJS, "noise.txt", bigBody(7, 4096), "a.css", strings.Repeat("a{color:red}\n", 200))
	one, many := newEnv(t), newEnv(t)
	m, err := one.ingest(t, zipOf(t, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := many.ingest(t, zipOf(t, src), Options{}); err != nil {
		t.Fatal(err)
	}
	var shas []string
	for _, f := range m.Files {
		shas = append(shas, f.SHA256)
		if _, err := MakeVariants(ctx, one.store, f.SHA256, one.tmp); err != nil {
			t.Fatal(err)
		}
	}
	// One object done first, on its own: left as it is.
	if _, err := MakeVariants(ctx, many.store, m.Files[0].SHA256, many.tmp); err != nil {
		t.Fatal(err)
	}
	errStop := errors.New("stop")
	calls := 0
	stopAt := func() error {
		if calls++; calls == 2 {
			return errStop
		}
		return nil
	}
	if err := MakeVariantsOf(ctx, many.store, shas, many.tmp, stopAt); !errors.Is(err, errStop) {
		t.Fatalf("stopped MakeVariantsOf: %v", err)
	}
	if err := MakeVariantsOf(ctx, many.store, shas, many.tmp, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		want, _ := LookupVariants(ctx, one.store, f.SHA256)
		got, err := LookupVariants(ctx, many.store, f.SHA256)
		if err != nil || !got.Done || !maps.Equal(got.Sizes, want.Sizes) {
			t.Errorf("%s: variants %+v (%v), one by one %+v", f.Path, got, err, want)
		}
		for enc := range want.Sizes {
			vf := f
			vf.Encoding = enc
			if read(t, many.store, vf.Key()) != read(t, one.store, vf.Key()) {
				t.Errorf("%s: %s copy differs", f.Path, enc)
			}
		}
	}
	if ents, _ := many.tmpEntries(); len(ents) != 0 {
		t.Errorf("temp files left: %v", ents)
	}
}
