package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
)

// orphanGrace: with storage: postgres the daemons may be serving while
// check runs, and an upload places its object before it commits its row.
// Objects younger than this are neither reported nor removed as orphans.
const orphanGrace = 15 * time.Minute

// checkPostgres is `reportd check` for storage: postgres and postgres+s3:
// rows against objects (Stat per row; a Walk of reports/ and covers/ for
// orphans), and reportCount and the per-day counters against the rows.
// The daemons may keep running. --repair rewrites the counters from the
// rows and removes orphans older than orphanGrace; rows whose object is
// gone are left for the operator (restore the object from the bucket's
// versions, or delete the report).
func checkPostgres(ctx context.Context, cfg Config, repair bool) (CheckReport, error) {
	if err := cfg.validateStorage(); err != nil {
		return CheckReport{}, err
	}
	loc, err := cfg.location()
	if err != nil {
		return CheckReport{}, err
	}
	store, err := openPostgres(ctx, cfg, report.Clock{Location: loc})
	if err != nil {
		return CheckReport{}, err
	}
	defer store.Close()
	var blobs blob.Store
	if cfg.onS3() {
		if blobs, err = openS3(ctx, cfg); err != nil {
			return CheckReport{}, err
		}
	} else {
		dir, err := files.Open(cfg.DataDir)
		if err != nil {
			return CheckReport{}, err
		}
		defer dir.Close()
		blobs = dir.Blobs()
	}
	rep, err := checkPostgresStores(ctx, store, blobs, time.Now())
	if err != nil || !repair {
		return rep, err
	}
	if len(rep.Drift) > 0 {
		if _, err := store.Recount(ctx); err != nil {
			return rep, err
		}
		for _, d := range rep.Drift {
			rep.Repaired = append(rep.Repaired, "fixed: "+d.String())
		}
	}
	for _, o := range rep.Orphans {
		key, err := files.Key(o)
		if err == nil {
			err = blobs.Delete(ctx, key)
		}
		if err != nil {
			rep.Unfixable = append(rep.Unfixable, fmt.Sprintf("remove orphan %s: %v", o, err))
			continue
		}
		rep.Repaired = append(rep.Repaired, "removed orphan "+o)
	}
	again, err := checkPostgresStores(ctx, store, blobs, time.Now())
	if err != nil {
		return rep, err
	}
	rep.verified(again, "still missing (restore the object or delete the report): ")
	return rep, nil
}

// checkedPrefixes are where report files and covers live in the store; an
// object there that no row names is an orphan.
var checkedPrefixes = []string{"reports/", "covers/"}

func checkPostgresStores(ctx context.Context, store *pgstore.Store, blobs blob.Store, now time.Time) (CheckReport, error) {
	rep := CheckReport{MissingFiles: []boltstore.Ref{}, Orphans: []string{}, Staged: []string{}, Drift: []boltstore.Drift{}, Repaired: []string{}, Unfixable: []string{}}
	var refs []boltstore.Ref
	projects, err := store.Projects(ctx)
	if err != nil {
		return rep, err
	}
	for _, p := range projects {
		if p.CoverImage != nil && *p.CoverImage != "" {
			refs = append(refs, boltstore.Ref{Path: *p.CoverImage, Project: p.ID})
		}
	}
	reports, err := store.Reports(ctx, nil)
	if err != nil {
		return rep, err
	}
	size := map[string]int64{}
	for _, r := range reports {
		// A site's filePath names its entry page; the object it owns is
		// its manifest (StoredPath), whose size is not the row's.
		p := r.StoredPath()
		refs = append(refs, boltstore.Ref{Path: p, Project: r.ProjectID, Report: r.ID})
		if r.Kind != report.KindSite {
			size[p] = r.Size
		}
	}
	// One listing of reports/ and covers/ answers both questions (is a
	// row's object there, with its size; which objects no row names)
	// instead of a HEAD per row; other refs (site manifests) are asked
	// for one by one.
	listed := map[string]blob.Info{}
	for _, prefix := range checkedPrefixes {
		if err := blobs.Walk(ctx, prefix, func(i blob.Info) error { listed[i.Key] = i; return nil }); err != nil {
			return rep, err
		}
	}
	refSet := map[string]bool{}
	for _, r := range refs {
		refSet[r.Path] = true
		key, err := files.Key(r.Path)
		if err != nil {
			rep.MissingFiles = append(rep.MissingFiles, r)
			continue
		}
		info, ok := listed[key]
		if !ok && !slices.ContainsFunc(checkedPrefixes, func(p string) bool { return strings.HasPrefix(key, p) }) {
			switch i, err := blobs.Stat(ctx, key); {
			case errors.Is(err, blob.ErrNotFound):
			case err != nil:
				return rep, err
			default:
				info, ok = i, true
			}
		}
		want, sized := size[r.Path]
		switch {
		case !ok:
			rep.MissingFiles = append(rep.MissingFiles, r)
		case sized && info.Size != want:
			rep.MissingFiles = append(rep.MissingFiles, r) // not the bytes the row describes
		}
	}
	for key, i := range listed {
		if p := files.APIPath(key); !refSet[p] && now.Sub(i.ModTime) > orphanGrace {
			rep.Orphans = append(rep.Orphans, p)
		}
	}
	sort.Strings(rep.Orphans)
	drift, err := store.CounterDrift(ctx)
	if err != nil {
		return rep, err
	}
	rep.Drift = append(rep.Drift, drift...)
	rep.Counts = counts(refs)
	return rep, nil
}
