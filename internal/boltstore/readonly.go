package boltstore

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/reportd/reportd/internal/report"
)

// OpenReadOnly opens an existing store for reading only (a shared lock that
// a running daemon's exclusive one excludes), for offline backups and checks.
func OpenReadOnly(path string, clock report.Clock, timeout time.Duration) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return newStore(db, clock), nil
}

// ErrLocked means another process (a running reportd) holds the store.
var ErrLocked = errors.New("locked by another process (is reportd running?)")
