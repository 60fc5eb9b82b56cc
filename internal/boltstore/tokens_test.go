package boltstore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/content"
	"github.com/reportd/reportd/internal/idempotency"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/storetest"
	"github.com/reportd/reportd/internal/tokens"
)

// A version 2 store (no tokens bucket) is upgraded on open to the current version.
func TestVersion2GetsTheTokensBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reportd.db")
	s, err := Open(path, report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	s = reopenAs(t, s, path, 2, bucketTokens)
	defer s.Close()
	s.DB().View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketTokens) == nil {
			t.Error("no tokens bucket after the upgrade")
		}
		if v := tx.Bucket(bucketMeta).Get(keyStorageVersion); !bytes.Equal(v, u64(storageVersion)) {
			t.Errorf("storage version %x, want %d", v, storageVersion)
		}
		return nil
	})
}

// Only the digest reaches the file: the secret's bytes are nowhere in it.
func TestTokenSecretNotStored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reportd.db")
	s, err := Open(path, report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := tokens.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	tok, secret, err := set.Create(tokens.Spec{Name: "ci", Scope: tokens.Upload, Projects: []int64{2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := bytes.Cut([]byte(secret)[4:], []byte("_"))
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, sec) {
		t.Fatal("the token's secret is in the store file")
	}
	if !bytes.Contains(raw, []byte(tok.ID)) {
		t.Fatal("the token's row is not in the store file")
	}
	if s, err = Open(path, report.Clock{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	set, _ = tokens.Load(s)
	p, err := set.Authenticate(secret)
	if err != nil || p.ID != tok.ID || p.Scope != tokens.Upload || len(p.Projects) != 2 || p.Projects[0] != 1 {
		t.Fatalf("after reopening: %+v %v", p, err)
	}
}

// The token store conformance suite (also run on PostgreSQL).
func TestTokenStoreConformance(t *testing.T) {
	storetest.Tokens(t, func(t *testing.T) (tokens.Store, func() tokens.Store) {
		path := filepath.Join(t.TempDir(), "reportd.db")
		cur, err := Open(path, report.Clock{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cur.Close() })
		return cur, func() tokens.Store {
			cur.Close()
			if cur, err = Open(path, report.Clock{}); err != nil {
				t.Fatal(err)
			}
			return cur
		}
	})
}

// The content signing key conformance suite (also run on PostgreSQL).
func TestContentKeyConformance(t *testing.T) {
	storetest.ContentKey(t, func(t *testing.T) (content.KeyStore, content.KeyStore, func() content.KeyStore) {
		path := filepath.Join(t.TempDir(), "reportd.db")
		cur, err := Open(path, report.Clock{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cur.Close() })
		return cur, cur, func() content.KeyStore {
			cur.Close()
			if cur, err = Open(path, report.Clock{}); err != nil {
				t.Fatal(err)
			}
			return cur
		}
	})
}

// The Idempotency-Key conformance suite (also run on PostgreSQL).
func TestIdempotencyConformance(t *testing.T) {
	storetest.Idempotency(t, func(t *testing.T) (idempotency.Store, idempotency.Store, func() idempotency.Store) {
		path := filepath.Join(t.TempDir(), "reportd.db")
		cur, err := Open(path, report.Clock{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cur.Close() })
		return cur, cur, func() idempotency.Store {
			cur.Close()
			if cur, err = Open(path, report.Clock{}); err != nil {
				t.Fatal(err)
			}
			return cur
		}
	})
}
