package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/storetest"
	"github.com/reportd/reportd/internal/testserver"
)

// A throwaway PostgreSQL on loopback for this test binary (internal/testserver).
func TestMain(m *testing.M) { testserver.Main(m) }

var ctx = context.Background()

func open(t *testing.T, dsn string, clock report.Clock) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(ctx, dsn, clock)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock report.Clock) (report.MetaStore, func() report.MetaStore) {
		dsn := testserver.DSN(t)
		cur := open(t, dsn, clock)
		t.Cleanup(func() { cur.Close() })
		return cur, func() report.MetaStore {
			cur.Close()
			cur = open(t, dsn, clock)
			return cur
		}
	})
}

func versions(t *testing.T, dsn string) []int32 {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, "SELECT version FROM schema_migrations ORDER BY version")
	v, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantAllApplied(t *testing.T, dsn string) {
	t.Helper()
	steps, err := pgstore.Migrations()
	if err != nil || len(steps) == 0 {
		t.Fatalf("embedded migrations: %d %v", len(steps), err)
	}
	got := versions(t, dsn)
	if len(got) != len(steps) {
		t.Fatalf("schema_migrations has %v, want each of %d steps once", got, len(steps))
	}
	for i, m := range steps {
		if int(got[i]) != m.Version {
			t.Fatalf("schema_migrations has %v, want the versions of %+v", got, steps)
		}
	}
}

// Migrating an up-to-date database does nothing, and reopening keeps data.
func TestMigrationsIdempotent(t *testing.T) {
	dsn := testserver.DSN(t)
	s := open(t, dsn, report.Clock{})
	defer s.Close()
	wantAllApplied(t, dsn)
	id, _ := s.NextProjectID(ctx)
	if _, err := s.CreateProject(ctx, report.Project{ID: id, Name: "kept", CreatedAt: report.LocalTime{Time: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		applied, err := pgstore.Migrate(ctx, s.Pool())
		if err != nil || len(applied) != 0 {
			t.Fatalf("migrate again: applied %v, %v", applied, err)
		}
	}
	s2 := open(t, dsn, report.Clock{})
	defer s2.Close()
	wantAllApplied(t, dsn)
	if p, err := s2.Project(ctx, id); err != nil || p.Name != "kept" {
		t.Fatalf("after reopen: %+v %v", p, err)
	}
}

// Replicas starting together on an empty database all succeed, and each
// step is applied exactly once (the advisory lock serialises them).
func TestConcurrentOpens(t *testing.T) {
	dsn := testserver.DSN(t)
	const n = 4
	var wg sync.WaitGroup
	stores := make([]*pgstore.Store, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			stores[i], errs[i] = pgstore.Open(ctx, dsn, report.Clock{})
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	wantAllApplied(t, dsn)
	// They share one id sequence.
	seen := map[int64]bool{}
	for _, s := range stores {
		id, err := s.NextReportID(ctx)
		if err != nil || seen[id] {
			t.Fatalf("id %d (%v) issued twice across replicas", id, err)
		}
		seen[id] = true
	}
}

// A database written by a newer reportd (a schema version this one does
// not know) is refused, not written to.
func TestNewerSchemaRefused(t *testing.T) {
	dsn := testserver.DSN(t)
	s := open(t, dsn, report.Clock{})
	defer s.Close()
	if _, err := s.Pool().Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES (9999, 'future')"); err != nil {
		t.Fatal(err)
	}
	if s2, err := pgstore.Open(ctx, dsn, report.Clock{}); err == nil || !strings.Contains(err.Error(), "9999") {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("open of a newer schema: %v", err)
	}
}

// Latest is an index probe, never a scan or a sort of the project's
// reports, for each form of query: the plan of its real statement, on a
// table with enough rows (and statistics) that a scan would show.
func TestLatestUsesIndex(t *testing.T) {
	dsn := testserver.DSN(t)
	s := open(t, dsn, report.Clock{})
	defer s.Close()
	// A walk of the primary key backwards, filtering, looks cheap to the
	// planner (project 1 is half the table) but would read every newer row.
	seedPlanReports(t, s)
	conn, err := s.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	name, branch, none, md := "coverage", "main", "", report.MD
	for i, c := range []struct {
		q     report.LatestQuery
		index string
	}{
		{report.LatestQuery{Project: 1}, "reports_project"},
		{report.LatestQuery{Project: 1, Name: &name}, "reports_latest_name"},
		{report.LatestQuery{Project: 1, Branch: &branch}, "reports_latest_branch"},
		{report.LatestQuery{Project: 1, Branch: &none}, "reports_latest_branch"},
		{report.LatestQuery{Project: 1, Name: &name, Branch: &branch}, "reports_latest"},
		{report.LatestQuery{Project: 1, Name: &name, Type: &md}, "reports_latest_name_type"},
		{report.LatestQuery{Project: 1, Name: &name, Type: &md, Branch: &branch}, "reports_latest_name_type_branch"},
	} {
		query, args := pgstore.LatestSQL(c.q)
		// The plan for these values, and the generic plan that a prepared
		// statement (pgx caches them) may switch to after a few runs.
		custom := explain(t, conn, "EXPLAIN "+query, args...)
		if _, err := conn.Exec(ctx, fmt.Sprintf("PREPARE latest%d AS %s", i, query)); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
			t.Fatal(err)
		}
		var params []string // EXECUTE takes literals
		for _, a := range args {
			switch a := a.(type) {
			case []int64:
				params = append(params, fmt.Sprintf("'{%d}'", a[0]))
			case string:
				params = append(params, "'"+strings.ReplaceAll(a, "'", "''")+"'")
			}
		}
		generic := explain(t, conn, fmt.Sprintf("EXPLAIN EXECUTE latest%d(%s)", i, strings.Join(params, ", ")))
		if _, err := conn.Exec(ctx, "RESET plan_cache_mode"); err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{custom, generic} {
			if !strings.Contains(text, "Index Scan") || !strings.Contains(text, " "+c.index+" ") ||
				strings.Contains(text, "Sort") || strings.Contains(text, "Seq Scan") {
				t.Errorf("Latest %+v: the plan does not probe %s alone:\n%s", c.q, c.index, text)
			}
		}
	}
}

// seedPlanReports fills an empty store with enough rows (and statistics)
// that a scan would show in a plan: 20,000 reports, project 1 went quiet
// (its 10,000 are the oldest ids), 39 others share the newer 10,000; 5
// names, 3 types, 4 branches (” among them).
func seedPlanReports(t *testing.T, s *pgstore.Store) {
	t.Helper()
	if _, err := s.Pool().Exec(ctx, `
		INSERT INTO projects (id, name, slug, created_at) SELECT i, 'p' || i, 'p' || i, now() FROM generate_series(1, 40) i;
		INSERT INTO reports (id, project_id, file_name, file_type, file_path, upload_time, size, sha256, name, branch)
		SELECT i, CASE WHEN i <= 10000 THEN 1 ELSE 2 + i % 39 END, 'r.md', (ARRAY['md', 'html', 'pdf'])[1 + i % 3], '/uploads/reports/' || i, now(), 1, 'ab',
			(ARRAY['coverage', 'e2e', 'unit', 'perf', 'lint'])[1 + i % 5], (ARRAY['', 'main', 'dev', 'release'])[1 + i % 4]
		FROM generate_series(1, 20000) i;
		ANALYZE reports`); err != nil {
		t.Fatal(err)
	}
}

// explain runs an EXPLAIN statement on q and returns the plan's text.
func explain(t *testing.T, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, query string, args ...any) string {
	t.Helper()
	rows, _ := q.Query(ctx, query, args...)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// A DSN that does not parse is reported without echoing it (it may hold
// a password).
func TestBadDSNNotEchoed(t *testing.T) {
	_, err := pgstore.Open(ctx, "postgres://u:s3cret@[::1", report.Clock{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("bad DSN: %v", err)
	}
}

// A database written by the first release (schema version 1 only, with
// rows) is brought up to date by Open: the later steps run once, the old
// rows read back with no generator, summary or retention policy, and
// every form of Latest finds them.
func TestUpgradeFromVersion1(t *testing.T) {
	dsn := testserver.DSN(t)
	steps, err := pgstore.Migrations()
	if err != nil || len(steps) < 2 || steps[0].Version != 1 {
		t.Fatalf("embedded migrations: %+v %v", steps, err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, steps[0].SQL+`;
		CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO schema_migrations (version, name) VALUES (1, 'init');
		INSERT INTO projects (id, name, created_at, report_count) VALUES (nextval('project_ids'), 'old', now(), 1);
		INSERT INTO reports (id, project_id, file_name, file_type, file_path, upload_time, size, sha256, name, branch)
		VALUES (nextval('report_ids'), 1, 'coverage.html', 'html', '/uploads/reports/1.html', now(), 10, 'ab', 'coverage', 'main')`); err != nil {
		t.Fatal(err)
	}
	s := open(t, dsn, report.Clock{})
	defer s.Close()
	wantAllApplied(t, dsn)
	p, err := s.Project(ctx, 1)
	if err != nil || p.Name != "old" || p.Retention != nil || p.ReportCount != 1 {
		t.Fatalf("old project: %+v %v", p, err)
	}
	name, branch := "coverage", "main"
	for _, q := range []report.LatestQuery{{Project: 1}, {Project: 1, Name: &name}, {Project: 1, Branch: &branch},
		{Project: 1, Name: &name, Branch: &branch}} {
		r, err := s.Latest(ctx, q)
		if err != nil || r.ID != 1 || r.Generator != "" || r.Summary != nil || r.Branch == nil || *r.Branch != "main" {
			t.Fatalf("old report by %+v: %+v %v", q, r, err)
		}
	}
	// The sequences carry on past the old rows.
	if id, err := s.NextReportID(ctx); err != nil || id != 2 {
		t.Fatalf("next report id: %d %v", id, err)
	}
}

// TestSiteLock: ingests hold the site lock shared and GC exclusive, across
// daemons: while one daemon ingests, another cannot take it exclusively,
// and while one collects, none can ingest.
func TestSiteLock(t *testing.T) {
	clock := report.Clock{Location: time.UTC}
	dsn := testserver.DSN(t)
	a, b := open(t, dsn, clock), open(t, dsn, clock)
	defer a.Close()
	defer b.Close()
	probe, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close(ctx)
	try := func(fn string) bool {
		t.Helper()
		var ok bool
		if err := probe.QueryRow(ctx, "SELECT "+fn+"($1)", pgstore.SitesLockKey).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok {
			unlock := strings.Replace(fn, "try_advisory_lock", "advisory_unlock", 1)
			if _, err := probe.Exec(ctx, "SELECT "+unlock+"($1)", pgstore.SitesLockKey); err != nil {
				t.Fatal(err)
			}
		}
		return ok
	}
	in1, err := a.LockSites(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	in2, err := b.LockSites(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if try("pg_try_advisory_lock") || !try("pg_try_advisory_lock_shared") {
		t.Fatal("two ingests: an exclusive lock was free, or a shared one taken")
	}
	in1()
	if try("pg_try_advisory_lock") {
		t.Fatal("one ingest left: an exclusive lock was free")
	}
	in2()
	gc, err := b.LockSites(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if try("pg_try_advisory_lock_shared") {
		t.Fatal("during a GC an ingest could take the lock")
	}
	gc()
	if !try("pg_try_advisory_lock") {
		t.Fatal("the lock stayed taken after every holder let go")
	}
}
