package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// MigrateOptions says how `reportd migrate` copies.
type MigrateOptions struct {
	// From names the source in progress lines (its data directory).
	From string
	// Resume continues into a target that is not empty: rows and objects
	// already there and equal to the source are kept, the rest is copied.
	Resume bool
	// SameFiles: the target's file store is the source's (a data
	// directory that stays where it is): no object is copied, each is
	// hashed in place.
	SameFiles bool
	// Progress receives one line per step and, while copying, one every
	// few seconds (nil: none).
	Progress io.Writer
}

// MigrateSummary is what a migration did and verified.
type MigrateSummary struct {
	Projects       int64   `json:"projects"`
	Reports        int64   `json:"reports"`
	Tokens         int64   `json:"tokens"`
	DayCounts      int64   `json:"dayCounts"`
	Objects        int64   `json:"objects"`
	Bytes          int64   `json:"bytes"`
	ObjectsCopied  int64   `json:"objectsCopied"`
	ObjectsKept    int64   `json:"objectsKept"` // --resume: already there and verified
	RowsKept       int64   `json:"rowsKept"`    // --resume: projects and reports already there
	LastProjectID  int64   `json:"lastProjectId"`
	LastReportID   int64   `json:"lastReportId"`
	Seconds        float64 `json:"seconds"`
	SameDataDir    bool    `json:"sameDataDir"` // storage: postgres on the source's own data_dir: no file copied
	TargetStorage  string  `json:"targetStorage"`
	VerifiedObject int64   `json:"verifiedObjects"`
}

// ErrMigrateNotEmpty refuses a target that holds rows or objects, unless
// MigrateOptions.Resume.
var ErrMigrateNotEmpty = errors.New("the target is not empty (rows in PostgreSQL or objects in the file store): run with --resume to continue an interrupted migration into it, or give an empty database and bucket")

// ErrMigrateVerify marks a migration whose copy does not match the source.
var ErrMigrateVerify = errors.New("verification failed")

// MigrateStores are one side of a migration: its stores and its tokens.
type MigrateStores struct {
	Meta   report.Maintainer
	Tokens tokens.Store
	Files  blob.Store
}

// migration is one run of Migrate.
type migration struct {
	opt  MigrateOptions
	src  report.Maintainer
	srcT tokens.Store
	srcB blob.Store
	dst  report.Maintainer
	dstT tokens.Store
	dstB blob.Store
	sum  MigrateSummary
	prog *progress
	// digests are the sha256 of every source object, by key, as read
	// while copying (report files also match their row's digest).
	digests map[string]string
	sizes   map[string]int64
	// inTarget are the keys whose bytes copyObject already hashed in the
	// target (in place, or kept by --resume): verify does not read them again.
	inTarget map[string]bool
}

// Migrate copies src into dst, then verifies it: row counts per table,
// every row, the per-day counters, the sequences and the sha256 of every
// object read back from the target. A target that is not empty is
// refused (ErrMigrateNotEmpty) before anything is written, unless
// opt.Resume. The source is only read.
func Migrate(ctx context.Context, src, dst MigrateStores, opt MigrateOptions) (MigrateSummary, error) {
	start := time.Now()
	m := &migration{opt: opt, prog: newProgress(opt.Progress), digests: map[string]string{}, sizes: map[string]int64{}, inTarget: map[string]bool{},
		src: src.Meta, srcT: src.Tokens, srcB: src.Files, dst: dst.Meta, dstT: dst.Tokens, dstB: dst.Files}
	m.sum.SameDataDir = opt.SameFiles
	if !opt.Resume {
		empty, err := m.targetEmpty(ctx)
		if err != nil {
			return m.sum, err
		}
		if !empty {
			return m.sum, ErrMigrateNotEmpty
		}
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"objects", m.copyObjects},
		{"projects", m.copyProjects},
		{"reports", m.copyReports},
		{"results", m.copyResults},
		{"tokens", m.copyTokens},
		{"sequences", m.copySequences},
		{"verify", m.verify},
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			return m.sum, fmt.Errorf("migrate: %s: %w", s.name, err)
		}
	}
	m.sum.Seconds = time.Since(start).Seconds()
	return m.sum, nil
}

// targetEmpty: no row in any table, no object in the file store (unless
// it is the source's own directory).
func (m *migration) targetEmpty(ctx context.Context) (bool, error) {
	counts, err := m.dst.Counts(ctx)
	if err != nil {
		return false, err
	}
	for _, n := range counts {
		if n > 0 {
			return false, nil
		}
	}
	if m.sum.SameDataDir {
		return true, nil
	}
	errFound := errors.New("found")
	err = m.dstB.Walk(ctx, "", func(blob.Info) error { return errFound })
	if errors.Is(err, errFound) {
		return false, nil
	}
	return err == nil, err
}

// copyObjects copies every object of the source's uploads/ (report files,
// covers, report sites and whatever else lives there) in key order,
// streaming each one and hashing it on the way; a report file must match
// its row's sha256.
func (m *migration) copyObjects(ctx context.Context) error {
	rowSum := map[string]string{}
	reps, err := m.src.Reports(ctx, nil)
	if err != nil {
		return err
	}
	for _, r := range reps {
		if k, err := files.Key(r.FilePath); err == nil {
			rowSum[k] = r.SHA256
		}
	}
	var infos []blob.Info
	if err := m.srcB.Walk(ctx, "", func(i blob.Info) error { infos = append(infos, i); return nil }); err != nil {
		return err
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	var total int64
	for _, i := range infos {
		total += i.Size
	}
	m.prog.step("copying %d objects (%s) from %s", len(infos), HumanSize(total), m.opt.From)
	for n, i := range infos {
		if err := ctx.Err(); err != nil {
			return err
		}
		digest, copied, err := m.copyObject(ctx, i, rowSum[i.Key])
		if err != nil {
			return fmt.Errorf("%s: %w", i.Key, err)
		}
		m.digests[i.Key], m.sizes[i.Key] = digest, i.Size
		m.sum.Objects++
		m.sum.Bytes += i.Size
		if copied {
			m.sum.ObjectsCopied++
		} else {
			m.sum.ObjectsKept++
		}
		m.prog.tick("objects %d/%d, %s of %s", n+1, len(infos), HumanSize(m.sum.Bytes), HumanSize(total))
	}
	return nil
}

// copyObject copies one object unless (resume, or the same directory) the
// target already holds it with the same bytes. want is the row's digest
// for a report file ("" otherwise).
func (m *migration) copyObject(ctx context.Context, i blob.Info, want string) (digest string, copied bool, err error) {
	srcDigest := func() (string, error) {
		d, _, err := hashObject(ctx, m.srcB, i.Key)
		return d, err
	}
	if m.sum.SameDataDir {
		d, err := srcDigest()
		if err == nil && want != "" && d != want {
			err = fmt.Errorf("the file's sha256 %s is not its row's %s (run reportd check on the source)", d, want)
		}
		m.inTarget[i.Key] = err == nil // the source's directory is the target's
		return d, false, err
	}
	if m.opt.Resume {
		if ti, err := m.dstB.Stat(ctx, i.Key); err == nil && ti.Size == i.Size {
			have, _, err := hashObject(ctx, m.dstB, i.Key)
			if err != nil {
				return "", false, err
			}
			d := want
			if d == "" {
				if d, err = srcDigest(); err != nil {
					return "", false, err
				}
			}
			if have == d {
				m.inTarget[i.Key] = true
				return d, false, nil
			}
		} else if err != nil && !errors.Is(err, blob.ErrNotFound) {
			return "", false, err
		}
	}
	o, err := m.srcB.Open(ctx, i.Key)
	if err != nil {
		return "", false, err
	}
	defer o.Close()
	h := sha256.New()
	if _, err := m.dstB.Put(ctx, i.Key, io.TeeReader(o, h), blob.PutOptions{Size: i.Size}); err != nil {
		return "", false, err
	}
	d := hex.EncodeToString(h.Sum(nil))
	if want != "" && d != want {
		_ = m.dstB.Delete(ctx, i.Key)
		return "", false, fmt.Errorf("the file's sha256 %s is not its row's %s (run reportd check on the source)", d, want)
	}
	return d, true, nil
}

// hashObject streams key through sha256.
func hashObject(ctx context.Context, s blob.Store, key string) (string, int64, error) {
	o, err := s.Open(ctx, key)
	if err != nil {
		return "", 0, err
	}
	defer o.Close()
	h := sha256.New()
	n, err := io.Copy(h, blob.ContextReader(ctx, o))
	return hex.EncodeToString(h.Sum(nil)), n, err
}

func (m *migration) copyProjects(ctx context.Context) error {
	src, err := m.src.Projects(ctx)
	if err != nil {
		return err
	}
	have, err := m.dst.Projects(ctx)
	if err != nil {
		return err
	}
	there := map[int64]bool{}
	for _, p := range have {
		there[p.ID] = true
	}
	m.prog.step("copying %d projects", len(src))
	for _, p := range src {
		if there[p.ID] {
			m.sum.RowsKept++
			continue // verify compares it
		}
		if _, err := m.dst.CreateProject(ctx, p); err != nil {
			return fmt.Errorf("project %d: %w", p.ID, err)
		}
	}
	m.sum.Projects = int64(len(src))
	return nil
}

func (m *migration) copyReports(ctx context.Context) error {
	src, err := m.src.Reports(ctx, nil)
	if err != nil {
		return err
	}
	have, err := m.dst.Reports(ctx, nil)
	if err != nil {
		return err
	}
	there := map[int64]bool{}
	for _, r := range have {
		there[r.ID] = true
	}
	m.prog.step("copying %d reports", len(src))
	var todo []report.ReportRecord
	for _, r := range src {
		if there[r.ID] {
			m.sum.RowsKept++
			continue
		}
		todo = append(todo, r)
	}
	// COPY in chunks, each one transaction that also adds its rows to
	// reportCount and the day counters (BulkLoad): an interrupted run
	// leaves whole chunks, which --resume keeps.
	for len(todo) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(todo), migrateChunk)
		if err := m.dst.BulkLoad(ctx, nil, todo[:n]); err != nil {
			return fmt.Errorf("reports %d-%d: %w", todo[0].ID, todo[n-1].ID, err)
		}
		todo = todo[n:]
		m.prog.tick("reports: %d to go", len(todo))
	}
	m.sum.Reports = int64(len(src))
	return nil
}

// copyResults copies every report's per-test results that the target
// lacks (a resumed run skips what it copied).
func (m *migration) copyResults(ctx context.Context) error {
	src, err := m.src.Reports(ctx, nil)
	if err != nil {
		return err
	}
	m.prog.step("copying the per-test results of %d reports", len(src))
	for _, r := range src {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := m.src.Results(ctx, r.ID)
		if err != nil || res == nil {
			if err != nil {
				return fmt.Errorf("results of report %d: %w", r.ID, err)
			}
			continue
		}
		if have, err := m.dst.Results(ctx, r.ID); err != nil || have != nil {
			if err != nil {
				return fmt.Errorf("results of report %d: %w", r.ID, err)
			}
			continue
		}
		if err := m.dst.SetResults(ctx, r.ID, res); err != nil {
			return fmt.Errorf("results of report %d: %w", r.ID, err)
		}
	}
	return nil
}

// migrateChunk is how many report rows one COPY transaction carries.
const migrateChunk = 20000

// copyTokens writes every token record as it is (an existing one is
// replaced by the source's).
func (m *migration) copyTokens(ctx context.Context) error {
	recs, err := m.srcT.Tokens()
	if err != nil {
		return err
	}
	m.prog.step("copying %d tokens", len(recs))
	for _, r := range recs {
		if err := m.dstT.PutToken(r); err != nil {
			return fmt.Errorf("token %s: %w", r.ID, err)
		}
	}
	m.sum.Tokens = int64(len(recs))
	return nil
}

// copySequences moves PostgreSQL's id sequences past every id bbolt ever
// handed out (deleted rows' too): ids are never reused.
func (m *migration) copySequences(ctx context.Context) error {
	p, r, err := m.src.Sequences(ctx)
	if err != nil {
		return err
	}
	m.sum.LastProjectID, m.sum.LastReportID = p, r
	return m.dst.AdvanceSequences(ctx, p, r)
}

// verify compares the target with the source: counts per table, every
// project, report and token, the per-day counters, the sequences, and the
// sha256 of every object in the target (read back unless copyObject hashed
// it there already: inTarget).
func (m *migration) verify(ctx context.Context) error {
	m.prog.step("verifying")
	var bad []string
	fail := func(format string, args ...any) {
		if len(bad) < 20 {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	counts, err := m.dst.Counts(ctx)
	if err != nil {
		return err
	}
	days, err := m.src.DayCounts(ctx)
	if err != nil {
		return err
	}
	m.sum.DayCounts = int64(len(days))
	for t, want := range map[string]int64{"projects": m.sum.Projects, "reports": m.sum.Reports, "tokens": m.sum.Tokens, "project_days": m.sum.DayCounts} {
		if counts[t] != want {
			fail("table %s has %d rows, the source %d", t, counts[t], want)
		}
	}
	if err := sameJSON(ctx, "project", fail, m.src.Projects, m.dst.Projects); err != nil {
		return err
	}
	all := func(s report.MetaStore) func(context.Context) ([]report.ReportRecord, error) {
		return func(ctx context.Context) ([]report.ReportRecord, error) { return s.Reports(ctx, nil) }
	}
	if err := sameJSON(ctx, "report", fail, all(m.src), all(m.dst)); err != nil {
		return err
	}
	srcTok, err := m.srcT.Tokens()
	if err != nil {
		return err
	}
	dstTok, err := m.dstT.Tokens()
	if err != nil {
		return err
	}
	sort.Slice(srcTok, func(i, j int) bool { return srcTok[i].ID < srcTok[j].ID })
	if a, b := mustJSON(srcTok), mustJSON(dstTok); a != b && len(srcTok)+len(dstTok) > 0 {
		fail("tokens differ:\n  source %s\n  target %s", a, b)
	}
	dstDays, err := m.dst.DayCounts(ctx)
	if err != nil {
		return err
	}
	for _, d := range report.DayDrift(days, dstDays) {
		fail("project %d: %d uploads counted on %s in the source, %d in the target", d.Project, d.Stored, d.Day, d.Actual)
	}
	if p, r, err := m.dst.Sequences(ctx); err != nil {
		return err
	} else if p < m.sum.LastProjectID || r < m.sum.LastReportID {
		fail("sequences at %d/%d, below the source's last ids %d/%d", p, r, m.sum.LastProjectID, m.sum.LastReportID)
	}
	keys := make([]string, 0, len(m.digests))
	for k := range m.digests {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for n, k := range keys {
		if m.inTarget[k] {
			m.sum.VerifiedObject++ // hashed in the target while copying
			continue
		}
		d, size, err := hashObject(ctx, m.dstB, k)
		switch {
		case err != nil:
			fail("object %s: %v", k, err)
		case d != m.digests[k] || size != m.sizes[k]:
			fail("object %s: %d bytes with sha256 %s in the target, %d bytes with %s in the source", k, size, d, m.sizes[k], m.digests[k])
		default:
			m.sum.VerifiedObject++
		}
		m.prog.tick("verified %d/%d objects", n+1, len(keys))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w:\n  %s", ErrMigrateVerify, joinLines(bad))
	}
	return nil
}

// sameJSON compares two lists row by row as the API would show them.
func sameJSON[T any](ctx context.Context, what string, fail func(string, ...any), src, dst func(context.Context) ([]T, error)) error {
	a, err := src(ctx)
	if err != nil {
		return err
	}
	b, err := dst(ctx)
	if err != nil {
		return err
	}
	if len(a) != len(b) {
		fail("%d %ss in the source, %d in the target", len(a), what, len(b))
	}
	for i := range min(len(a), len(b)) {
		if x, y := mustJSON(a[i]), mustJSON(b[i]); x != y {
			fail("%s differs:\n  source %s\n  target %s", what, x, y)
		}
	}
	return nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func joinLines(s []string) string {
	out := ""
	for i, l := range s {
		if i > 0 {
			out += "\n  "
		}
		out += l
	}
	return out
}
