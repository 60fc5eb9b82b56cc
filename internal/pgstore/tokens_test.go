package pgstore_test

import (
	"testing"

	"github.com/reportd/reportd/internal/pgtest"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/storetest"
	"github.com/reportd/reportd/internal/tokens"
)

// The token store conformance suite (also run on bbolt).
func TestTokenStoreConformance(t *testing.T) {
	storetest.Tokens(t, func(t *testing.T) (tokens.Store, func() tokens.Store) {
		dsn := pgtest.DSN(t)
		cur := open(t, dsn, report.Clock{})
		t.Cleanup(func() { cur.Close() })
		return cur, func() tokens.Store {
			cur.Close()
			cur = open(t, dsn, report.Clock{})
			return cur
		}
	})
}
