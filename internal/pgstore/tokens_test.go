package pgstore_test

import (
	"testing"

	"github.com/reportd/reportd/internal/content"
	"github.com/reportd/reportd/internal/idempotency"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/storetest"
	"github.com/reportd/reportd/internal/testserver"
	"github.com/reportd/reportd/internal/tokens"
)

// The token store conformance suite (also run on bbolt).
func TestTokenStoreConformance(t *testing.T) {
	storetest.Tokens(t, func(t *testing.T) (tokens.Store, func() tokens.Store) {
		dsn := testserver.DSN(t)
		cur := open(t, dsn, report.Clock{})
		t.Cleanup(func() { cur.Close() })
		return cur, func() tokens.Store {
			cur.Close()
			cur = open(t, dsn, report.Clock{})
			return cur
		}
	})
}

// The content signing key conformance suite (also run on bbolt): two
// replicas on one database race to make the key and agree on it.
func TestContentKeyConformance(t *testing.T) {
	storetest.ContentKey(t, func(t *testing.T) (content.KeyStore, content.KeyStore, func() content.KeyStore) {
		dsn := testserver.DSN(t)
		a, b := open(t, dsn, report.Clock{}), open(t, dsn, report.Clock{})
		t.Cleanup(func() { a.Close(); b.Close() })
		return a, b, func() content.KeyStore {
			a.Close()
			a = open(t, dsn, report.Clock{})
			return a
		}
	})
}

// The Idempotency-Key conformance suite (also run on bbolt): two replicas
// on one database race for a key.
func TestIdempotencyConformance(t *testing.T) {
	storetest.Idempotency(t, func(t *testing.T) (idempotency.Store, idempotency.Store, func() idempotency.Store) {
		dsn := testserver.DSN(t)
		a, b := open(t, dsn, report.Clock{}), open(t, dsn, report.Clock{})
		t.Cleanup(func() { a.Close(); b.Close() })
		return a, b, func() idempotency.Store {
			a.Close()
			a = open(t, dsn, report.Clock{})
			return a
		}
	})
}
