// Package ops holds reportd's maintenance commands (check, migrate, the
// orphan search they share), written once over the storage interfaces:
// report.Maintainer for the metadata and blob.Store for the files. The
// daemon opens the stores through its registry (daemon/stores.go) and
// hands them over; nothing here knows bbolt, PostgreSQL, a directory or a
// bucket.
package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
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

// PDFPrefix is where the shared PDF cache keeps converted PDFs in a file
// store (service.PDFPrefix): derived objects, never orphans.
const PDFPrefix = "pdf/"

// derived are the key prefixes of objects no row names by design: the
// content objects of sites (site GC's) and the shared PDF cache.
var derived = []string{site.ObjectPrefix, PDFPrefix}

// IsDerived tells whether key is a derived object, never an orphan.
func IsDerived(key string) bool {
	return slices.ContainsFunc(derived, func(p string) bool { return strings.HasPrefix(key, p) })
}

// FilePather lists the API paths the rows refer to (report.MetaStore has
// it).
type FilePather interface {
	FilePaths(ctx context.Context, fn func(path string) error) error
}

// PathSet reads the API paths every row refers to (FilePaths), for
// Orphans.
func PathSet(meta FilePather) func(context.Context) (map[string]bool, error) {
	return func(ctx context.Context) (map[string]bool, error) {
		out := map[string]bool{}
		err := meta.FilePaths(ctx, func(p string) error { out[p] = true; return nil })
		return out, err
	}
}

// Orphans is the one search for unreferenced objects, behind the start-up
// sweep, reportd check and the bucket sweep: the objects of fs below
// prefixes (none: the whole store) that are not derived, were last
// modified before notAfter (the zero time: any age), and that no path of
// refs names, in key order. It lists first and reads the references
// after: a row is committed right after its object is written, so the row
// of any listed object old enough is visible to that read. listed, if not
// nil, sees every object walked.
func Orphans(ctx context.Context, fs blob.Store, prefixes []string, notAfter time.Time,
	refs func(context.Context) (map[string]bool, error), listed func(blob.Info)) ([]blob.Info, error) {
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	var cands []blob.Info
	for _, prefix := range prefixes {
		err := fs.Walk(ctx, prefix, func(i blob.Info) error {
			if listed != nil {
				listed(i)
			}
			if !IsDerived(i.Key) && (notAfter.IsZero() || !i.ModTime.After(notAfter)) {
				cands = append(cands, i)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", prefix, err)
		}
	}
	named, err := refs(ctx)
	if err != nil {
		return nil, fmt.Errorf("read file references: %w", err)
	}
	var out []blob.Info
	for _, i := range cands {
		if !named[files.APIPath(i.Key)] {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
	return out, nil
}

// RemoveOrphans removes what Orphans finds and returns the keys it
// removed; a failed removal is in the error, the others go on.
func RemoveOrphans(ctx context.Context, fs blob.Store, prefixes []string, notAfter time.Time,
	refs func(context.Context) (map[string]bool, error)) ([]string, error) {
	orphans, err := Orphans(ctx, fs, prefixes, notAfter, refs, nil)
	if err != nil {
		return nil, err
	}
	var (
		removed []string
		errs    []error
	)
	for _, o := range orphans {
		if err := fs.Delete(ctx, o.Key); err != nil {
			errs = append(errs, fmt.Errorf("remove orphan %s: %w", o.Key, err))
			continue
		}
		removed = append(removed, o.Key)
	}
	return removed, errors.Join(errs...)
}

// ClearStaging removes everything in dir (a daemon's staging area: what
// is there was never acknowledged) and returns the paths it removed.
func ClearStaging(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed, nil
}
