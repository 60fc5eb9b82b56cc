package daemon

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
		if err := store.Recount(ctx); err != nil {
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

func checkPostgresStores(ctx context.Context, store *pgstore.Store, blobs blob.Store, now time.Time) (CheckReport, error) {
	rep := CheckReport{MissingFiles: []boltstore.Ref{}, Orphans: []string{}, Drift: []boltstore.Drift{}, Repaired: []string{}, Unfixable: []string{}}
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
		refs = append(refs, boltstore.Ref{Path: r.FilePath, Project: r.ProjectID, Report: r.ID})
		size[r.FilePath] = r.Size
	}
	refSet := map[string]bool{}
	for _, r := range refs {
		refSet[r.Path] = true
		key, err := files.Key(r.Path)
		if err != nil {
			rep.MissingFiles = append(rep.MissingFiles, r)
			continue
		}
		info, err := blobs.Stat(ctx, key)
		switch {
		case errors.Is(err, blob.ErrNotFound):
			rep.MissingFiles = append(rep.MissingFiles, r)
		case err != nil:
			return rep, err
		case r.Report > 0 && info.Size != size[r.Path]:
			rep.MissingFiles = append(rep.MissingFiles, r) // not the bytes the row describes
		}
	}
	for _, prefix := range []string{"reports/", "covers/"} {
		err := blobs.Walk(ctx, prefix, func(i blob.Info) error {
			if p := files.APIPath(i.Key); !refSet[p] && now.Sub(i.ModTime) > orphanGrace {
				rep.Orphans = append(rep.Orphans, p)
			}
			return nil
		})
		if err != nil {
			return rep, err
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
