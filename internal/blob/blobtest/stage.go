package blobtest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/blob"
)

// stage: a file created in the store's staging area is no object (Walk
// and Stat do not see it) until PutFile stores it; then it reads back
// whole, and the staging area holds nothing more once the caller removed
// what PutFile left (S3: the file it streamed).
func stage(t *testing.T, s blob.Store) {
	st, ok := s.(blob.Stager)
	if !ok {
		t.Fatalf("%T has no staging area (blob.Stager)", s)
	}
	dir := st.TempDir()
	if !filepath.IsAbs(dir) {
		t.Fatalf("TempDir %q is not absolute", dir)
	}
	if blob.TempDir(s) != dir {
		t.Errorf("blob.TempDir = %q, the store says %q", blob.TempDir(s), dir)
	}
	before, _ := filepath.Glob(filepath.Join(dir, "conformance-*"))
	f, err := blob.CreateTemp(s, "conformance-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	if filepath.Dir(f.Name()) != dir {
		t.Errorf("staged file %s is not in %s", f.Name(), dir)
	}
	data := bytes.Repeat([]byte("staged "), 10000)
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "staged/one"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("staged file visible before PutFile: %v", err)
	}
	n := 0
	if err := s.Walk(ctx, "", func(blob.Info) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("Walk of a store holding only a staged file: %d objects, %v", n, err)
	}
	info, err := blob.PutFile(ctx, s, "staged/one", f.Name(), blob.PutOptions{Size: int64(len(data)), IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(data)) {
		t.Errorf("PutFile size %d, want %d", info.Size, len(data))
	}
	if got := read(t, s, "staged/one"); !bytes.Equal(got, data) {
		t.Errorf("staged object reads back %d bytes, want %d", len(got), len(data))
	}
	os.Remove(f.Name()) // adopted: gone already
	if after, _ := filepath.Glob(filepath.Join(dir, "conformance-*")); len(after) != len(before) {
		t.Errorf("staging area holds %v after PutFile, %v before", after, before)
	}
}
