package site

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

// TestViewFS reads a really ingested site through View.FS: fstest.TestFS
// checks it as io/fs requires (files, implied folders, ReadDir, Stat,
// Seek, ReadAt), fs.WalkDir finds the manifest's files, and each reads
// back the bytes uploaded.
func TestViewFS(t *testing.T) {
	e := newEnv(t)
	body := map[string]string{
		"index.html":                "<html>index</html>",
		"a-b/x.css":                 "a{}",
		"a/x.js":                    "var x;",
		"a/b/c/deep.json":           `{"deep":true}`,
		"d_145eef247bfb46b6/m.html": "<html>main</html>",
		"empty.txt":                 "",
	}
	var es []ent
	for name, b := range body {
		es = append(es, ent{name: name, body: b})
	}
	m, err := e.ingest(t, partsOf(es), Options{})
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	v := NewView(m, func(ctx2 context.Context, f File) (blob.Object, error) {
		opened++
		return e.store.Open(ctx2, f.Key())
	})
	fsys := v.FS(ctx)
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if err := fstest.TestFS(fsys, paths...); err != nil {
		t.Fatal(err)
	}

	var walked []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		walked = append(walked, p)
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if string(b) != body[p] {
			t.Errorf("%s: read %q, uploaded %q", p, b, body[p])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(walked)
	if !slices.Equal(walked, paths) {
		t.Errorf("walked %q, manifest %q", walked, paths)
	}

	// Stat answers from the manifest, without opening the object.
	before := opened
	info, err := fs.Stat(fsys, "a/b/c/deep.json")
	if err != nil || info.Size() != int64(len(body["a/b/c/deep.json"])) || info.Sys().(File).ContentType != "application/json" {
		t.Errorf("stat: %v %+v", err, info)
	}
	if opened != before {
		t.Errorf("stat opened %d objects", opened-before)
	}
	if info, err := fs.Stat(fsys, "a/b"); err != nil || !info.IsDir() {
		t.Errorf("stat of a folder: %v %v", info, err)
	}

	for _, name := range []string{"nope.html", "a/nope", "index.html/x"} {
		if _, err := fsys.Open(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("open %s: %v, want fs.ErrNotExist", name, err)
		}
	}
	for _, name := range []string{"/index.html", "../index.html", "a//x.js", ""} {
		if _, err := fsys.Open(name); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("open %q: %v, want fs.ErrInvalid", name, err)
		}
	}

	// View.Open: by manifest path, NotFound (and fs.ErrNotExist) when absent.
	o, f, err := v.Open(ctx, "a/x.js")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(o)
	o.Close()
	if err != nil || string(b) != body["a/x.js"] || f.Path != "a/x.js" {
		t.Errorf("View.Open: %q %+v %v", b, f, err)
	}
	if _, _, err := v.Open(ctx, "nope.html"); !report.IsKind(err, report.NotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("View.Open of a missing file: %v", err)
	}

	// An object that cannot be opened is the opener's error.
	broken := NewView(m, func(context.Context, File) (blob.Object, error) { return nil, blob.ErrNotFound })
	if _, err := broken.FS(ctx).Open("index.html"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("open through a failing opener: %v", err)
	}
}

// BenchmarkViewFSWalk: listing a 100,000-file site through View.FS (what
// detect.SiteFS does before it opens anything): the folders are built
// once per FS, then fs.WalkDir visits every entry.
func BenchmarkViewFSWalk(b *testing.B) {
	m := Manifest{Version: Version}
	for i := range 100_000 {
		m.Files = append(m.Files, File{Path: fmt.Sprintf("d%03d/e%02d/f%05d.html", i%500, i%40, i), Size: 1})
	}
	slices.SortFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	v := NewView(m, func(context.Context, File) (blob.Object, error) { return nil, blob.ErrNotFound })
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		fs.WalkDir(v.FS(ctx), ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return err
		})
		if n != len(m.Files) {
			b.Fatalf("walked %d files of %d", n, len(m.Files))
		}
	}
}
