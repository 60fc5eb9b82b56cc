// Package ops holds reportd's maintenance commands (check, migrate, the
// orphan search they share), written once over the storage interfaces:
// report.Maintainer for the metadata and blob.Store for the files. The
// daemon opens the stores through its registry (daemon/stores.go) and
// hands them over; nothing here knows bbolt, PostgreSQL, a directory or a
// bucket.
package ops

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
	"github.com/reportd/reportd/internal/site"
)

// Stores are the two stores of one deployment, as a command sees them.
type Stores struct {
	Meta  report.Maintainer
	Files blob.Store
	// Shared: daemons may be serving while the command runs (PostgreSQL).
	// An upload places its object before it commits its row, so objects
	// younger than OrphanGrace are never orphans, and rows whose object
	// is gone are left for the operator (restore it, or delete the
	// report). Otherwise the command has the stores to itself (bbolt's
	// lock): every unreferenced object is an orphan, and repair drops
	// rows whose object is gone.
	Shared bool
	// StagingDir is where a daemon stages uploads (data_dir/tmp) when the
	// command has the stores to itself: what is left there was never
	// acknowledged; check lists it apart and repair removes it. "": none.
	StagingDir string
	// DataDir names orphans relative to the data directory
	// ("uploads/reports/7.md") when set, as API paths otherwise.
	DataDir string
}

// OrphanGrace is how old an unreferenced object must be before a check on
// shared stores calls it an orphan.
const OrphanGrace = 15 * time.Minute

// derived are the key prefixes of objects no row names by design: the
// content objects of sites (site GC's) and the shared PDF cache.
var derived = []string{site.ObjectPrefix, service.PDFPrefix}

// IsDerived tells whether key is a derived object, never an orphan.
func IsDerived(key string) bool {
	return slices.ContainsFunc(derived, func(p string) bool { return strings.HasPrefix(key, p) })
}

// Orphans lists, in key order, the objects of fs that no ref names, that
// are not derived, and that were last modified before notAfter (the zero
// time: any age). listed gets every object walked, orphan or not.
func Orphans(ctx context.Context, fs blob.Store, refs map[string]bool, notAfter time.Time, listed func(blob.Info)) ([]blob.Info, error) {
	var out []blob.Info
	err := fs.Walk(ctx, "", func(i blob.Info) error {
		if listed != nil {
			listed(i)
		}
		if IsDerived(i.Key) || refs[files.APIPath(i.Key)] {
			return nil
		}
		if !notAfter.IsZero() && i.ModTime.After(notAfter) {
			return nil
		}
		out = append(out, i)
		return nil
	})
	sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
	return out, err
}
