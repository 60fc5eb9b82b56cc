package local

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/blobtest"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	base := t.TempDir()
	s, err := Open(filepath.Join(base, "uploads"), filepath.Join(base, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// No failed or finished Put leaves a temp file behind (once the
		// committed batches' folders are removed).
		s.Settle()
		if left, _ := os.ReadDir(s.tmp); len(left) != 0 {
			t.Errorf("temp files left: %v", left)
		}
		s.Close()
	})
	return s
}

// Incomplete lists the store's temp files (its unfinished writes).
func Incomplete(t *testing.T, s blob.Store) []string {
	var names []string
	s.(*Store).Settle()
	entries, err := os.ReadDir(s.(*Store).tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return newStore(t) }, blobtest.Options{Incomplete: Incomplete})
}

var ctx = context.Background()

func TestOpenGivesTheFile(t *testing.T) {
	s := newStore(t)
	if _, err := s.Put(ctx, "reports/1.pdf", strings.NewReader("%PDF-1.4"), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := s.Open(ctx, "reports/1.pdf")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	f, ok := blob.OSFile(o)
	if !ok {
		t.Fatal("local objects must expose their *os.File (sendfile)")
	}
	if f.Name() != filepath.Join(s.Dir(), "reports", "1.pdf") {
		t.Errorf("file %s", f.Name())
	}
	p, err := s.LocalPath("reports/1.pdf")
	if err != nil || p != f.Name() {
		t.Errorf("LocalPath = %s, %v", p, err)
	}
	// ServeContent ranges through the object.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Range", "bytes=1-3")
	http.ServeContent(rec, req, "", o.Info().ModTime, o)
	if rec.Code != http.StatusPartialContent || rec.Body.String() != "PDF" {
		t.Errorf("range: %d %q", rec.Code, rec.Body.String())
	}
}

func TestNoSymlinkEscape(t *testing.T) {
	s := newStore(t)
	outside := filepath.Join(filepath.Dir(s.Dir()), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(s.Dir()), filepath.Join(s.Dir(), "up")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"link", "up/secret"} {
		if _, err := s.Open(ctx, k); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Open %s through a symlink: %v", k, err)
		}
		if _, err := s.Stat(ctx, k); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Stat %s through a symlink: %v", k, err)
		}
	}
	if err := s.Copy(ctx, "up/secret", "stolen"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Copy through a symlink: %v", err)
	}
	var walked []string
	s.Walk(ctx, "", func(i blob.Info) error { walked = append(walked, i.Key); return nil })
	if len(walked) != 0 {
		t.Errorf("Walk followed symlinks: %v", walked)
	}
	if _, err := s.Put(ctx, "up/planted", strings.NewReader("x"), blob.PutOptions{}); err == nil {
		t.Error("Put through a symlinked folder leaving the store succeeded")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Dir()), "planted")); err == nil {
		t.Error("Put wrote outside the store")
	}
}

func TestAdopt(t *testing.T) {
	s := newStore(t)
	staged := filepath.Join(s.tmp, "upload-1")
	if err := os.WriteFile(staged, []byte("staged bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := blob.PutFile(ctx, s, "covers/3/logo.png", staged, blob.PutOptions{Size: 12})
	if err != nil || info.Size != 12 {
		t.Fatalf("PutFile = %+v, %v", info, err)
	}
	if _, err := os.Stat(staged); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("adopted file still at its staged name: %v", err)
	}
	o, _ := s.Open(ctx, "covers/3/logo.png")
	b, _ := io.ReadAll(o)
	o.Close()
	if string(b) != "staged bytes" {
		t.Errorf("adopted %q", b)
	}
	// Conditional adoption leaves the staged file for the caller on conflict.
	if err := os.WriteFile(staged, []byte("other"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Adopt(ctx, "covers/3/logo.png", staged, blob.PutOptions{IfNoneMatch: true}); !errors.Is(err, blob.ErrExists) {
		t.Errorf("conditional Adopt onto an existing key: %v", err)
	}
	if _, err := s.Adopt(ctx, "covers/3/new.png", staged, blob.PutOptions{Size: 99}); err == nil {
		t.Error("Adopt with the wrong size succeeded")
	}
	os.Remove(staged)
}

// A staged file on another file system cannot be renamed in (EXDEV): it is
// copied, and the staged file removed. /dev/shm is a tmpfs apart from the
// disk the temporary directory is on, so the rename really fails.
func TestAdoptAcrossFileSystemsCopies(t *testing.T) {
	s := newStore(t)
	dev := func(p string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			return 0
		}
		return uint64(st.Dev)
	}
	if dev("/dev/shm") == 0 || dev("/dev/shm") == dev(s.Dir()) {
		t.Skipf("no file system apart from %s to stage on (/dev/shm is missing or the same)", s.Dir())
	}
	dir, err := os.MkdirTemp("/dev/shm", "reportd-adopt-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	other := filepath.Join(dir, "elsewhere")
	os.WriteFile(other, []byte("far"), 0o600)
	if _, err := s.Adopt(ctx, "far", other, blob.PutOptions{Size: 3}); err != nil {
		t.Fatal(err)
	}
	o, err := s.Open(ctx, "far")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(o)
	o.Close()
	if !bytes.Equal(b, []byte("far")) {
		t.Errorf("adopted %q", b)
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the staged file is still there after the copy: %v", err)
	}
}

func TestDeletePrefixRemovesTheFolder(t *testing.T) {
	s := newStore(t)
	s.Put(ctx, "covers/4/a.png", strings.NewReader("a"), blob.PutOptions{})
	if err := s.DeletePrefix(ctx, "covers/4/"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "covers", "4")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cover folder left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "covers")); err != nil {
		t.Errorf("parent folder gone: %v", err)
	}
}

func TestTempInsideRefused(t *testing.T) {
	d := t.TempDir()
	if _, err := Open(d, filepath.Join(d, "tmp")); err == nil {
		t.Error("a temp directory inside the store was accepted")
	}
}

// TestStatThroughAFolderMadeAgain: Stat keeps folders open (statdir.go); a
// folder removed and made again is looked at afresh, both ways.
func TestStatThroughAFolderMadeAgain(t *testing.T) {
	s := newStore(t)
	if _, err := s.Put(ctx, "covers/4/a.png", strings.NewReader("a"), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if in, err := s.Stat(ctx, "covers/4/a.png"); err != nil || in.Size != 1 {
		t.Fatalf("Stat: %+v %v", in, err)
	}
	if _, err := s.Stat(ctx, "covers/4/b.png"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat of a missing key: %v", err)
	}
	if err := s.DeletePrefix(ctx, "covers/4/"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "covers/4/a.png"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat after the folder went: %v", err)
	}
	if _, err := s.Put(ctx, "covers/4/b.png", strings.NewReader("bb"), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if in, err := s.Stat(ctx, "covers/4/b.png"); err != nil || in.Size != 2 {
		t.Fatalf("Stat in the folder made again: %+v %v", in, err)
	}
	// A link in place of an object is not followed.
	if err := os.Symlink(filepath.Join(s.Dir(), "covers", "4", "b.png"), filepath.Join(s.Dir(), "covers", "4", "c.png")); err != nil {
		t.Fatal(err)
	}
	if in, err := s.Stat(ctx, "covers/4/c.png"); err != nil && !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat of a link inside the store: %+v %v", in, err)
	}
}
