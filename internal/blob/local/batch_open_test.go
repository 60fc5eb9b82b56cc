package local

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/blob"
)

// TestBatchOpen: a batch reads what it staged before Commit, the store's
// object after, and nothing after Discard.
func TestBatchOpen(t *testing.T) {
	s := newStore(t)
	read := func(b blob.Batch, key string) (string, error) {
		t.Helper()
		o, err := b.(blob.BatchOpener).Open(ctx, key)
		if err != nil {
			return "", err
		}
		defer o.Close()
		got, err := io.ReadAll(o)
		if o.Info().Size != int64(len(got)) {
			t.Errorf("%s: size %d, read %d", key, o.Info().Size, len(got))
		}
		return string(got), err
	}
	b := s.NewBatch()
	if err := b.Put(ctx, "cas/ab/abc", strings.NewReader("staged"), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := read(b, "cas/ab/abc"); err != nil || got != "staged" {
		t.Fatalf("before Commit: %q, %v", got, err)
	}
	if _, err := s.Open(ctx, "cas/ab/abc"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("visible before Commit: %v", err)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := read(b, "cas/ab/abc"); err != nil || got != "staged" {
		t.Fatalf("after Commit: %q, %v", got, err)
	}
	d := s.NewBatch()
	if err := d.Put(ctx, "cas/cd/cde", strings.NewReader("dropped"), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Discard()
	if _, err := read(d, "cas/cd/cde"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("after Discard: %v", err)
	}
}
