package pgstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/pgtest"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/storetest"
)

// A throwaway PostgreSQL on loopback for this test binary (internal/pgtest).
func TestMain(m *testing.M) { pgtest.Main(m) }

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
		dsn := pgtest.DSN(t)
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
	dsn := pgtest.DSN(t)
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
	dsn := pgtest.DSN(t)
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
	dsn := pgtest.DSN(t)
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

// Latest is an index probe, never a scan of the project's reports.
func TestLatestUsesIndex(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := open(t, dsn, report.Clock{})
	defer s.Close()
	conn, err := s.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The table is empty, so make the planner show what it would do on a big one.
	if _, err := conn.Exec(ctx, "SET enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "RESET enable_seqscan")
	rows, _ := conn.Query(ctx, `EXPLAIN SELECT * FROM reports
		WHERE project_id = 1 AND name = 'coverage' AND branch = 'main' ORDER BY id DESC LIMIT 1`)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "reports_latest") || strings.Contains(text, "Sort") {
		t.Fatalf("Latest's plan does not walk reports_latest:\n%s", text)
	}
}

// A DSN that does not parse is reported without echoing it (it may hold
// a password).
func TestBadDSNNotEchoed(t *testing.T) {
	_, err := pgstore.Open(ctx, "postgres://u:s3cret@[::1", report.Clock{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("bad DSN: %v", err)
	}
}
