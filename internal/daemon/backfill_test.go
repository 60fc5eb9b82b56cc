package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/report"
)

// TestBackfillResults: reports stored before per-test results existed
// (their results removed here, as a store upgraded to version 8 has
// them) get them from their files; a second run changes nothing; a
// report whose file is gone is counted as failed, not fatal.
func TestBackfillResults(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir)
	s, stop := startServer(t, c)
	base := "http://" + s.Addr()
	ids := uploadForBackfill(t, base)
	stop()

	db, err := bolt.Open(filepath.Join(dir, "reportd.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var had int
	err = db.Update(func(tx *bolt.Tx) error {
		had = tx.Bucket([]byte("results")).Stats().KeyN
		return tx.DeleteBucket([]byte("results"))
	})
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("results")); return err })
	}
	db.Close()
	if err != nil || had != 2 {
		t.Fatalf("results at upload: %d %v, want 2", had, err)
	}
	os.Remove(filepath.Join(dir, "uploads", "reports", fmt.Sprintf("%d.html", ids[2])))

	log := slog.New(slog.DiscardHandler)
	seen := map[int64]string{}
	n, err := BackfillResults(context.Background(), c, log, func(id int64, o string) { seen[id] = o })
	if err != nil || n.Reports != 4 || n.Filled != 1 || n.Skipped != 1 || n.Failed != 1 || n.None != 1 || n.Had != 0 {
		t.Fatalf("first run: %+v %v", n, err)
	}
	if seen[ids[0]] != "filled" || seen[ids[1]] != "skipped" || seen[ids[2]] != "failed" || seen[ids[3]] != "none" {
		t.Fatalf("outcomes %v", seen)
	}
	n, err = BackfillResults(context.Background(), c, log, nil)
	if err != nil || n.Filled != 0 || n.Had != 1 || n.Failed != 1 {
		t.Fatalf("second run: %+v %v", n, err)
	}
	store, err := boltstore.Open(filepath.Join(dir, "reportd.db"), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	res, err := store.Results(context.Background(), ids[0])
	if err != nil || res == nil || len(res.Tests) != 2 || res.Tests[1].Status != report.TestFailed {
		t.Fatalf("backfilled results: %+v %v", res, err)
	}
}

// TestBackfillResultsPostgres: with metadata_store postgres the stores
// come from the same registry and backfill runs beside a serving daemon.
func TestBackfillResultsPostgres(t *testing.T) {
	c := postgresConfig(t, t.TempDir())
	s, _ := startServer(t, c)
	ids := uploadForBackfill(t, "http://"+s.Addr())
	conn, err := pgx.Connect(context.Background(), c.Postgres.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tag, err := conn.Exec(context.Background(), "DELETE FROM report_results WHERE report_id = ANY($1)", ids)
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("results at upload: %v %v, want 2", tag, err)
	}
	seen := map[int64]string{}
	n, err := BackfillResults(context.Background(), c, slog.New(slog.DiscardHandler), func(id int64, o string) { seen[id] = o })
	if err != nil || n.Reports != 4 || n.Filled != 2 || n.Skipped != 1 || n.None != 1 || n.Failed != 0 {
		t.Fatalf("backfill beside the daemon: %+v %v", n, err)
	}
	if seen[ids[0]] != "filled" || seen[ids[2]] != "filled" || seen[ids[1]] != "skipped" || seen[ids[3]] != "none" {
		t.Fatalf("outcomes %v", seen)
	}
	res, err := s.MetaStore().Results(context.Background(), ids[0])
	if err != nil || res == nil || len(res.Tests) != 2 || res.Tests[1].Status != report.TestFailed {
		t.Fatalf("backfilled results: %+v %v", res, err)
	}
}

// TestBackfillRefusesRunningDaemon: with bolt, backfill needs the store
// to itself (bbolt's lock).
func TestBackfillRefusesRunningDaemon(t *testing.T) {
	c := testConfig(t, t.TempDir())
	startServer(t, c)
	_, err := BackfillResults(context.Background(), c, slog.New(slog.DiscardHandler), nil)
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("backfill on a running daemon's store: %v", err)
	}
}

// uploadForBackfill uploads two mochawesome reports, a Markdown report and
// a plain HTML page (in that order: html, md, html, html) to a new
// project and returns their ids.
func uploadForBackfill(t *testing.T, base string) []int64 {
	t.Helper()
	p := createProject(t, base, "old")
	var ids []int64
	for i, f := range []struct{ typ, name string }{{"html", "a.html"}, {"md", "n.md"}, {"html", "b.html"}, {"html", "plain.html"}} {
		body := markdown(fmt.Sprint(i), 10)
		if f.typ == "html" && f.name != "plain.html" {
			body = mochawesomeHTML(f.name)
		}
		st, r, e, err := upload(httpClient, base, p.ID, f.typ, f.name, body)
		if st != http.StatusCreated {
			t.Fatalf("upload %s: %d %v %v", f.name, st, e, err)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// mochawesomeHTML is a mochawesome inline report with a passing and a
// failing test.
func mochawesomeHTML(name string) []byte {
	data := `{"stats":{"suites":1,"tests":2,"passes":1,"pending":0,"failures":1,"skipped":0},"results":[{"title":"","file":"t.js","tests":[],` +
		`"suites":[{"title":"s","file":"t.js","tests":[{"title":"` + name + `","fullTitle":"s ` + name + `","state":"passed","duration":3},` +
		`{"title":"breaks","fullTitle":"s breaks","state":"failed","duration":4}],"suites":[]}]}]}`
	esc := strings.NewReplacer("&", "&amp;", `"`, "&quot;", "'", "&#39;", "<", "&lt;", ">", "&gt;").Replace(data)
	return []byte(`<!doctype html><html><head><title>Mochawesome Report</title></head><body data-raw="` + esc + `"><div id="report"></div></body></html>`)
}
