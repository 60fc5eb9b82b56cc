package daemon

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
)

// TestMigrateCopiesResults: a report's per-test results reach PostgreSQL
// with it, and a second (resumed) run leaves them as they are.
func TestMigrateCopiesResults(t *testing.T) {
	src := makeBoltDeployment(t)
	res := &report.Results{Tests: []report.TestResult{{ID: "t", Title: "t", Status: report.TestFailed, DurationMs: 9}},
		Files: []report.FileCoverage{{Path: "a.py", Lines: 75}}}
	b, err := boltstore.Open(filepath.Join(src.dir, "reportd.db"), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	err = b.SetResults(context.Background(), 1, res)
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := postgresConfig(t, src.dir)
	setEnv(t, c)
	runCLI(t, 0, "migrate", "--from", src.dir)
	runCLI(t, 0, "migrate", "--from", src.dir, "--resume")
	dsn, err := c.PostgresDSN()
	if err != nil {
		t.Fatal(err)
	}
	pg, err := pgstore.Open(context.Background(), dsn, report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	got, err := pg.Results(context.Background(), 1)
	if err != nil || !reflect.DeepEqual(got, res) {
		t.Fatalf("results after migrate: %+v %v, want %+v", got, err, res)
	}
	if got, err := pg.Results(context.Background(), 2); err != nil || got != nil {
		t.Fatalf("a report without results: %+v %v", got, err)
	}
}
