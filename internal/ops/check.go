package ops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

// CheckReport is what `reportd check` found and, with --repair, did.
type CheckReport struct {
	MissingFiles []report.FileRef `json:"missingFiles"` // rows whose object is gone or is not the row's bytes
	Orphans      []string         `json:"orphans"`      // objects no row refers to (Stores.DataDir says how they are named)
	// Staged are leftovers in tmp/ of a daemon that stopped mid-upload
	// (a crash, a kill): never acknowledged, removed by the next start or
	// --repair, so they are reported apart and never make the store unclean.
	Staged    []string         `json:"staged"`
	Drift     []report.Drift   `json:"drift"`     // counters and index vs the rows
	Repaired  []string         `json:"repaired"`  // what --repair did, one line each
	Counts    map[string]int64 `json:"counts"`    // reports, covers
	Unfixable []string         `json:"unfixable"` // what --repair could not fix
}

// Clean reports whether nothing is wrong (after repair, if it ran). Staged
// files are not wrong: the next start clears them.
func (r CheckReport) Clean(repaired bool) bool {
	if repaired {
		return len(r.Unfixable) == 0
	}
	return len(r.MissingFiles) == 0 && len(r.Orphans) == 0 && len(r.Drift) == 0
}

// Check compares the metadata with the files: rows whose object is missing
// (or has another size than the row says), objects no row refers to, and
// counters or index entries that disagree with the rows. With repair it
// fixes what st's policy allows (Stores.Shared), then checks again: what
// is still wrong is listed as unfixable.
func Check(ctx context.Context, st Stores, repair bool) (CheckReport, error) {
	rep, err := st.scan(ctx, time.Now())
	if err != nil || !repair {
		return rep, err
	}
	dropped := false
	if !st.Shared {
		var drop []int64
		for _, r := range rep.MissingFiles {
			if r.Report > 0 {
				drop = append(drop, r.Report)
				rep.Repaired = append(rep.Repaired, fmt.Sprintf("dropped report %d (project %d): its file %s is gone", r.Report, r.Project, r.Path))
				continue
			}
			if err := st.Meta.ClearCover(ctx, r.Project); err != nil {
				return rep, err
			}
			rep.Repaired = append(rep.Repaired, fmt.Sprintf("unset the cover of project %d: %s is gone", r.Project, r.Path))
		}
		if err := st.Meta.DropReports(ctx, drop); err != nil {
			return rep, err
		}
		dropped = len(rep.MissingFiles) > 0
	}
	if len(rep.Drift) > 0 || dropped {
		fixed, err := st.Meta.Recount(ctx)
		if err != nil {
			return rep, err
		}
		for _, d := range fixed {
			rep.Repaired = append(rep.Repaired, "fixed: "+d.String())
		}
	}
	// Rows dropped above (and rows of vanished projects, which Recount
	// drops) may have freed objects: Orphans looks again before removing.
	removed, err := RemoveOrphans(ctx, st.Files, nil, st.orphanCutoff(time.Now()), PathSet(st.Meta))
	for _, k := range removed {
		rep.Repaired = append(rep.Repaired, "removed orphan "+st.name(k))
	}
	if err != nil {
		rep.Unfixable = append(rep.Unfixable, err.Error())
	}
	for _, s := range rep.Staged {
		if err := os.RemoveAll(filepath.Join(st.DataDir, filepath.FromSlash(s))); err != nil {
			rep.Unfixable = append(rep.Unfixable, fmt.Sprintf("remove staged file %s: %v", s, err))
			continue
		}
		rep.Repaired = append(rep.Repaired, "removed staged file "+strings.TrimSuffix(s, "/"))
	}
	again, err := st.scan(ctx, time.Now())
	if err != nil {
		return rep, err
	}
	missing := "still missing: "
	if st.Shared {
		missing = "still missing (restore the object or delete the report): "
	}
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
	return rep, nil
}

// scan is one pass of Check, without repair.
func (st Stores) scan(ctx context.Context, now time.Time) (CheckReport, error) {
	rep := CheckReport{MissingFiles: []report.FileRef{}, Orphans: []string{}, Staged: []string{}, Drift: []report.Drift{}, Repaired: []string{}, Unfixable: []string{}}
	refs, err := st.Meta.Refs(ctx)
	if err != nil {
		return rep, err
	}
	reports, err := st.Meta.Reports(ctx, nil)
	if err != nil {
		return rep, err
	}
	size := map[string]int64{}
	for _, r := range reports {
		if r.Kind != report.KindSite { // a site's manifest is not the row's size
			size[r.StoredPath()] = r.Size
		}
	}
	refSet := map[string]bool{}
	for _, r := range refs {
		refSet[r.Path] = true
	}
	// One walk answers both questions: is each row's object there, with
	// its size, and which objects no row names.
	listed := map[string]blob.Info{}
	orphans, err := Orphans(ctx, st.Files, nil, st.orphanCutoff(now), func(context.Context) (map[string]bool, error) { return refSet, nil },
		func(i blob.Info) { listed[i.Key] = i })
	if err != nil {
		return rep, err
	}
	for _, o := range orphans {
		rep.Orphans = append(rep.Orphans, st.name(o.Key))
	}
	for _, r := range refs {
		key, err := files.Key(r.Path)
		info, ok := listed[key]
		want, sized := size[r.Path]
		if err != nil || !ok || sized && info.Size != want {
			rep.MissingFiles = append(rep.MissingFiles, r)
		}
	}
	if rep.Staged, err = st.staged(); err != nil {
		return rep, err
	}
	drift, err := st.Meta.CounterDrift(ctx)
	if err != nil {
		return rep, err
	}
	rep.Drift = append(rep.Drift, drift...)
	rep.Counts = map[string]int64{"reports": 0, "covers": 0}
	for _, r := range refs {
		if r.Report > 0 {
			rep.Counts["reports"]++
		} else {
			rep.Counts["covers"]++
		}
	}
	return rep, nil
}

// orphanCutoff is the newest modification time an orphan may have.
func (st Stores) orphanCutoff(now time.Time) time.Time {
	if st.Shared {
		return now.Add(-OrphanGrace)
	}
	return time.Time{}
}

// name is how a report names the object of key.
func (st Stores) name(key string) string {
	if st.DataDir != "" {
		return strings.TrimPrefix(files.APIPath(key), "/")
	}
	return files.APIPath(key)
}

// staged lists what is in StagingDir, data-dir-relative with slashes
// (folders end in "/").
func (st Stores) staged() ([]string, error) {
	out := []string{}
	if st.StagingDir == "" {
		return out, nil
	}
	entries, err := os.ReadDir(st.StagingDir)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	for _, e := range entries {
		r, err := filepath.Rel(st.DataDir, filepath.Join(st.StagingDir, e.Name()))
		if err != nil {
			return out, err
		}
		r = filepath.ToSlash(r)
		if e.IsDir() {
			r += "/"
		}
		out = append(out, r)
	}
	sort.Strings(out)
	return out, nil
}
