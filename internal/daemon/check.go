package daemon

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// CheckReport is what `reportd check` found and, with --repair, did.
type CheckReport struct {
	MissingFiles []boltstore.Ref `json:"missingFiles"` // rows whose file is gone
	Orphans      []string        `json:"orphans"`      // files below uploads/ no row refers to
	// Staged are leftovers in tmp/ of a daemon that stopped mid-upload
	// (a crash, a kill): never acknowledged, removed by the next start or
	// --repair, so they are reported apart and never make the store unclean.
	Staged    []string          `json:"staged"`
	Drift     []boltstore.Drift `json:"drift"`     // counters and index vs the rows
	Repaired  []string          `json:"repaired"`  // what --repair did, one line each
	Counts    map[string]int64  `json:"counts"`    // projects, reports, files
	Unfixable []string          `json:"unfixable"` // what --repair could not fix
}

// Clean reports whether nothing is wrong (after repair, if it ran). Staged
// files are not wrong: the next start clears them.
func (r CheckReport) Clean(repaired bool) bool {
	if repaired {
		return len(r.Unfixable) == 0
	}
	return len(r.MissingFiles) == 0 && len(r.Orphans) == 0 && len(r.Drift) == 0
}

// Check compares the store with the files on disk: rows whose file is
// missing, files no row refers to, and counters or index entries that
// disagree with the rows. The daemon must not be running (the store's lock
// enforces it): an upload between its rename and its commit would look like
// an orphan. With repair, rows whose file is gone are dropped (covers are
// unset), counters and the index are rebuilt, and orphans are removed.
func Check(ctx context.Context, cfg config.Config, repair bool) (CheckReport, error) {
	if cfg.OnPostgres() {
		return checkPostgres(ctx, cfg, repair)
	}
	loc, err := cfg.Location()
	if err != nil {
		return CheckReport{}, err
	}
	clock := report.Clock{Location: loc}
	dbPath, err := existingStore(cfg)
	if err != nil {
		return CheckReport{}, err
	}
	var store *boltstore.Store
	if repair {
		store, err = boltstore.Open(dbPath, clock)
	} else {
		store, err = boltstore.OpenReadOnly(dbPath, clock, time.Second)
	}
	if err != nil {
		return CheckReport{}, err
	}
	defer store.Close()
	dir, err := files.Open(cfg.DataDir)
	if err != nil {
		return CheckReport{}, err
	}
	defer dir.Close()
	return checkStore(ctx, store, dir, repair)
}

func checkStore(ctx context.Context, store *boltstore.Store, dir *files.Dir, repair bool) (CheckReport, error) {
	rep := CheckReport{MissingFiles: []boltstore.Ref{}, Orphans: []string{}, Staged: []string{}, Drift: []boltstore.Drift{}, Repaired: []string{}, Unfixable: []string{}}
	refs, err := store.Refs(ctx)
	if err != nil {
		return rep, err
	}
	refSet := map[string]bool{}
	for _, r := range refs {
		refSet[r.Path] = true
		if f, _, err := dir.OpenFile(r.Path); err != nil {
			rep.MissingFiles = append(rep.MissingFiles, r)
		} else {
			f.Close()
		}
	}
	if rep.Orphans, rep.Staged, err = orphans(dir.Base(), refSet); err != nil {
		return rep, err
	}
	if rep.Drift, err = store.CounterDrift(ctx); err != nil {
		return rep, err
	}
	rep.Drift = append([]boltstore.Drift{}, rep.Drift...)
	rep.Counts = counts(refs)
	if !repair {
		return rep, nil
	}

	var drop []int64
	for _, r := range rep.MissingFiles {
		if r.Report > 0 {
			drop = append(drop, r.Report)
			rep.Repaired = append(rep.Repaired, fmt.Sprintf("dropped report %d (project %d): its file %s is gone", r.Report, r.Project, r.Path))
			continue
		}
		if err := store.ClearCover(ctx, r.Project); err != nil {
			return rep, err
		}
		rep.Repaired = append(rep.Repaired, fmt.Sprintf("unset the cover of project %d: %s is gone", r.Project, r.Path))
	}
	if err := store.DropReports(ctx, drop); err != nil {
		return rep, err
	}
	fixed, err := store.Recount(ctx)
	if err != nil {
		return rep, err
	}
	for _, d := range fixed {
		rep.Repaired = append(rep.Repaired, "fixed: "+d.String())
	}
	// Rows dropped above (and rows of vanished projects) may have freed
	// files: recompute what is referenced before removing anything.
	after, err := store.Refs(ctx)
	if err != nil {
		return rep, err
	}
	keep := map[string]bool{}
	for _, r := range after {
		keep[r.Path] = true
	}
	removed, err := dir.Sweep(func(p string) bool { return keep[p] || isSiteObject(p) })
	for _, p := range removed {
		r := rel(dir.Base(), p)
		what := "removed orphan "
		if strings.HasPrefix(r, "tmp/") {
			what = "removed staged file "
		}
		rep.Repaired = append(rep.Repaired, what+r)
	}
	if err != nil {
		rep.Unfixable = append(rep.Unfixable, "sweep: "+err.Error())
	}
	// Verify: a second pass must come out clean.
	again, err := checkStore(ctx, store, dir, false)
	if err != nil {
		return rep, err
	}
	rep.verified(again, "still missing: ")
	return rep, nil
}

// verified records what the second pass after a repair (again) still finds
// as unfixable, missing files with the given prefix, and takes its counts.
func (rep *CheckReport) verified(again CheckReport, missing string) {
	for _, r := range again.MissingFiles {
		rep.Unfixable = append(rep.Unfixable, missing+r.Path)
	}
	for _, p := range again.Orphans {
		rep.Unfixable = append(rep.Unfixable, "still orphaned: "+p)
	}
	for _, d := range again.Drift {
		rep.Unfixable = append(rep.Unfixable, "still drifting: "+d.String())
	}
	rep.Counts = again.Counts
}

// orphans lists files below uploads/ that no row refers to, and apart
// from them anything left in tmp/ (staged uploads of a crashed daemon), as
// data-dir-relative slash paths.
func orphans(base string, refs map[string]bool) (orphaned, staged []string, err error) {
	orphaned, staged = []string{}, []string{}
	for _, sub := range []string{"uploads", "tmp"} {
		out := &orphaned
		if sub == "tmp" {
			out = &staged
		}
		root := filepath.Join(base, sub)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if e.IsDir() {
				if sub == "tmp" && p != root {
					*out = append(*out, rel(base, p)+"/")
					return filepath.SkipDir
				}
				return nil
			}
			r := rel(base, p)
			if sub == "tmp" || !refs["/"+r] && !isSiteObject("/"+r) {
				*out = append(*out, r)
			}
			return nil
		})
		if err != nil {
			return orphaned, staged, err
		}
	}
	sort.Strings(orphaned)
	sort.Strings(staged)
	return orphaned, staged, nil
}

// isSiteObject tells whether an API path is a content object of the
// sites (uploads/cas/): site GC's to remove, never an orphan here.
func isSiteObject(p string) bool {
	return strings.HasPrefix(p, files.UploadsPrefix+site.ObjectPrefix)
}

func rel(base, p string) string {
	r, _ := filepath.Rel(base, p)
	return filepath.ToSlash(r)
}

func counts(refs []boltstore.Ref) map[string]int64 {
	c := map[string]int64{"reports": 0, "covers": 0}
	for _, r := range refs {
		if r.Report > 0 {
			c["reports"]++
		} else {
			c["covers"]++
		}
	}
	return c
}
