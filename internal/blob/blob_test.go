package blob_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/blobtest"
	"github.com/reportd/reportd/internal/blob/local"
	"github.com/reportd/reportd/internal/report"
)

func TestCheckKey(t *testing.T) {
	for _, k := range []string{"a", "reports/7.pdf", "covers/3/a b.png", "cas/ab/cdef", ".hidden", "a..b", "ü/ß"} {
		if err := blob.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v", k, err)
		}
	}
	for _, k := range blobtest.InvalidKeys {
		err := blob.CheckKey(k)
		if !errors.Is(err, blob.ErrInvalidKey) || !report.IsKind(err, report.Validation) {
			t.Errorf("CheckKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
	for _, p := range []string{"", "a/", "a", "a/b/"} {
		if err := blob.CheckPrefix(p); err != nil {
			t.Errorf("CheckPrefix(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"/", "a//", "../", "/a/"} {
		if err := blob.CheckPrefix(p); err == nil {
			t.Errorf("CheckPrefix(%q) accepted", p)
		}
	}
}

// plain hides every fast path of the store it wraps, so the suite runs
// the generic helpers (PutFile by Put, Copy by Open+Put, DeletePrefix by
// Walk+Delete) as they would run on a store that has none.
type plain struct{ s blob.Store }

func (p plain) Put(ctx context.Context, k string, r io.Reader, o blob.PutOptions) (blob.Info, error) {
	return p.s.Put(ctx, k, r, o)
}
func (p plain) Open(ctx context.Context, k string) (blob.Object, error) { return p.s.Open(ctx, k) }
func (p plain) Stat(ctx context.Context, k string) (blob.Info, error)   { return p.s.Stat(ctx, k) }
func (p plain) Delete(ctx context.Context, k string) error              { return p.s.Delete(ctx, k) }
func (p plain) Walk(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	return p.s.Walk(ctx, prefix, fn)
}

func TestConformanceWithoutFastPaths(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		d := t.TempDir()
		s, err := local.Open(filepath.Join(d, "objects"), filepath.Join(d, "tmp"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return plain{s}
	}, blobtest.Options{NoStaging: true})
}
