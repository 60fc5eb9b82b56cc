package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/testserver"
)

// postgresConfig is testConfig with storage: postgres on a fresh database.
func postgresConfig(t *testing.T, dataDir string) config.Config {
	t.Helper()
	c := testConfig(t, dataDir)
	c.Storage, c.Postgres.DSN = config.StoragePostgres, testserver.DSN(t)
	return c
}

// onBothStores runs fn as a subtest "bolt" with testConfig and one
// "postgres" with postgresConfig, each in a fresh data directory.
func onBothStores(t *testing.T, fn func(t *testing.T, c config.Config)) {
	t.Run("bolt", func(t *testing.T) { fn(t, testConfig(t, t.TempDir())) })
	t.Run("postgres", func(t *testing.T) { fn(t, postgresConfig(t, t.TempDir())) })
}

// TestPostgresStorage: a daemon with storage: postgres serves the API with
// exact counters, keeps no bbolt file, and after a restart on the same
// database and data directory (this time with the DSN from a file) has
// everything it had.
func TestPostgresStorage(t *testing.T) {
	dir := t.TempDir()
	c := postgresConfig(t, dir)
	s, stop := startServer(t, c)
	if s.Store() != nil || s.MetaStore() == nil {
		t.Fatalf("storage: postgres opened bbolt (%v) or no store (%v)", s.Store(), s.MetaStore())
	}
	base := "http://" + s.Addr()
	proj := createProject(t, base, "pg")
	sums := map[int64]string{}
	var ids []int64
	for i := range 3 {
		content := markdown(fmt.Sprint("pg", i), 2000+i)
		st, r, e, err := upload(httpClient, base, proj.ID, "md", fmt.Sprintf("r%d.md", i), content)
		if err != nil || st != http.StatusCreated {
			t.Fatalf("upload %d: %d %+v %v", i, st, e, err)
		}
		sums[r.ID] = sum(content)
		ids = append(ids, r.ID)
	}
	req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/reports/%d", base, ids[1]), nil)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %s", resp.Status)
	}
	delete(sums, ids[1])

	if _, err := os.Stat(filepath.Join(dir, "reportd.db")); !os.IsNotExist(err) {
		t.Errorf("storage: postgres left a reportd.db: %v", err)
	}
	if m := string(getBody(t, base+"/metrics")); strings.Contains(m, "reportd_store_db_bytes") || !strings.Contains(m, "reportd_store_uploads_bytes") {
		t.Errorf("metrics: want uploads bytes and no bbolt size")
	}

	verify := func(base string) {
		t.Helper()
		var p apiProject
		getJSON(t, fmt.Sprintf("%s/api/projects/%d", base, proj.ID), &p)
		if p.Name != "pg" || p.ReportCount != 2 || p.TodayNewReports != 2 {
			t.Errorf("project: %+v, want reportCount 2 and todayNewReports 2", p)
		}
		var reps []apiReport
		getJSON(t, fmt.Sprintf("%s/api/reports?projectId=%d", base, proj.ID), &reps)
		if len(reps) != len(sums) {
			t.Fatalf("list: %d reports, want %d: %+v", len(reps), len(sums), reps)
		}
		for _, r := range reps {
			want, ok := sums[r.ID]
			if !ok {
				t.Errorf("list has report %d, deleted or unknown", r.ID)
				continue
			}
			if got := sum(getBody(t, fmt.Sprintf("%s/api/reports/%d/download", base, r.ID))); got != want {
				t.Errorf("report %d: content differs", r.ID)
			}
		}
		resp, err := httpClient.Get(fmt.Sprintf("%s/api/reports/%d", base, ids[1]))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("deleted report %d still answers", ids[1])
		}
	}
	verify(base)
	stop()

	// Restart on the same database and data directory, the DSN from a file.
	c2 := c
	c2.Postgres.DSNFile = filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(c2.Postgres.DSNFile, []byte(c.Postgres.DSN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c2.Postgres.DSN = ""
	s2, _ := startServer(t, c2)
	base2 := "http://" + s2.Addr()
	verify(base2)
	// Ids keep counting past the deleted one.
	st, r, e, err := upload(httpClient, base2, proj.ID, "md", "after.md", markdown("after", 100))
	if err != nil || st != http.StatusCreated || r.ID <= ids[2] {
		t.Fatalf("upload after restart: %d %+v %+v %v", st, r, e, err)
	}
}

// TestPostgresConfigErrors: storage: postgres without a DSN, with both
// sources, or with an unreachable server fails with a message naming the
// keys, never the password.
func TestPostgresConfigErrors(t *testing.T) {
	_, err := loadArgs(t, []string{"REPORTD_STORAGE=postgres"})
	if err == nil || !strings.Contains(err.Error(), "postgres.dsn") || !strings.Contains(err.Error(), "REPORTD_POSTGRES_DSN") ||
		!strings.Contains(err.Error(), "postgres.dsn_file") {
		t.Errorf("no DSN: %v", err)
	}
	_, err = loadArgs(t, []string{"REPORTD_STORAGE=postgres", "REPORTD_POSTGRES_DSN=postgres://a@b/c", "REPORTD_POSTGRES_DSN_FILE=/x"})
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("both DSN sources: %v", err)
	}
	_, err = loadArgs(t, []string{"REPORTD_POSTGRES_DSN=postgres://a@b/c"})
	if err == nil || !strings.Contains(err.Error(), "storage: postgres") {
		t.Errorf("DSN with storage: bolt: %v", err)
	}
	c, err := loadArgs(t, []string{"REPORTD_STORAGE=postgres", "REPORTD_POSTGRES_DSN=postgres://a@b/c"})
	if err != nil || !c.OnPostgres() || c.Postgres.DSN != "postgres://a@b/c" {
		t.Errorf("good config: %+v %v", c.Postgres, err)
	}

	// Open checks too (tests and embedders build Config without load).
	c = testConfig(t, t.TempDir())
	c.Storage = config.StoragePostgres
	if err := (&Server{Config: c}).Open(context.Background()); err == nil || !strings.Contains(err.Error(), "postgres.dsn") {
		t.Errorf("Open without DSN: %v", err)
	}

	const password = "hunter2-s3cret"
	for _, dsn := range []string{
		"postgres://reportd:" + password + "@127.0.0.1:1/reportd?connect_timeout=5",
		"host=127.0.0.1 port=1 user=reportd password=" + password + " dbname=reportd connect_timeout=5",
		"postgres://reportd:" + password + "@127.0.0.1:1/reportd?connect_timeout=bad",
	} {
		c := testConfig(t, t.TempDir())
		c.Storage, c.Postgres.DSN = config.StoragePostgres, dsn
		s := &Server{Config: c}
		err := s.Open(context.Background())
		if err == nil {
			s.Close()
			t.Fatalf("Open on an unreachable server succeeded")
		}
		if strings.Contains(err.Error(), password) || !strings.Contains(err.Error(), "postgres") {
			t.Errorf("unreachable: %v (must not hold the password, must say postgres)", err)
		}
	}
	c = testConfig(t, t.TempDir())
	c.Storage, c.Postgres.DSNFile = config.StoragePostgres, filepath.Join(t.TempDir(), "missing")
	if err := (&Server{Config: c}).Open(context.Background()); err == nil || !strings.Contains(err.Error(), "postgres.dsn_file") {
		t.Errorf("missing DSN file: %v", err)
	}
}

// TestPostgresRefusals: backup and restore are bbolt's; with storage:
// postgres they refuse and say what to do instead (pg_dump, bucket
// versioning). check and tokens work there (TestPostgresCheckAndTokens).
func TestPostgresRefusals(t *testing.T) {
	dir := t.TempDir()
	c := postgresConfig(t, dir)
	s, _ := startServer(t, c)
	admin := adminAPI(t, s, dir)
	for _, q := range []struct{ method, path, body, want string }{
		{"GET", "/admin/backup", "", "pg_dump the database and copy the data directory"},
	} {
		st, b := admin(q.method, q.path, q.body)
		var e apiError
		if err := json.Unmarshal(b, &e); err != nil || st == http.StatusOK || st == http.StatusCreated ||
			e.Type != "ValidationError" || !strings.Contains(e.Error, q.want) {
			t.Errorf("%s %s: %d %s, want a ValidationError saying %q", q.method, q.path, st, b, q.want)
		}
	}

	if _, err := Backup(context.Background(), c, filepath.Join(t.TempDir(), "b.tar"), ""); err == nil || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("Backup: %v", err)
	}
	if _, err := s.CheckIdle(context.Background()); err == nil {
		t.Errorf("CheckIdle on postgres: no error")
	}

	// The commands, configured through the environment as a unit would be.
	t.Setenv("REPORTD_STORAGE", "postgres")
	t.Setenv("REPORTD_POSTGRES_DSN", c.Postgres.DSN)
	t.Setenv("REPORTD_DATA_DIR", dir)
	out := filepath.Join(t.TempDir(), "b.tar")
	for _, q := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--out", out}, "pg_dump"},
		{[]string{"restore", out, "--data-dir", t.TempDir()}, "pg_dump"},
	} {
		if got := runCLI(t, 1, q.args...); !strings.Contains(got, q.want) {
			t.Errorf("reportd %v: %s, want %q", q.args, got, q.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("refused backup left %s: %v", out, err)
	}
}

// TestPostgresBinary: the reportd process with storage: postgres from the
// environment serves, stops on SIGTERM, and finds its data again; the
// password in the DSN (ignored by the test server's trust auth) appears in
// no log line, at debug level.
func TestPostgresBinary(t *testing.T) {
	const password = "pw-never-logged-7d1f"
	dsn := strings.Replace(testserver.DSN(t), "postgres://postgres@", "postgres://postgres:"+password+"@", 1)
	if !strings.Contains(dsn, password) {
		t.Fatalf("unexpected test DSN shape")
	}
	dir := t.TempDir()
	env := []string{"REPORTD_STORAGE=postgres", "REPORTD_LOG_LEVEL=debug"}
	d := startReportd(t, dir, append(env, "REPORTD_POSTGRES_DSN="+dsn)...)
	proj := createProject(t, d.URL(), "pg-bin")
	content := markdown("pg-bin", 1500)
	st, r, e, err := upload(httpClient, d.URL(), proj.ID, "md", "bin.md", content)
	if err != nil || st != http.StatusCreated {
		t.Fatalf("upload: %d %+v %v", st, e, err)
	}
	if err := stopWith(t, d, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v\n%s", err, d.Log())
	}
	if strings.Contains(d.Log(), password) || !strings.Contains(d.Log(), "storage=postgres") {
		t.Fatalf("log holds the password or does not name the storage:\n%s", d.Log())
	}

	file := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(file, []byte(dsn), 0o600); err != nil {
		t.Fatal(err)
	}
	d2 := startReportd(t, dir, append(env, "REPORTD_POSTGRES_DSN_FILE="+file)...)
	var p apiProject
	getJSON(t, fmt.Sprintf("%s/api/projects/%d", d2.URL(), proj.ID), &p)
	if p.Name != "pg-bin" || p.ReportCount != 1 || p.TodayNewReports != 1 {
		t.Errorf("after restart: %+v", p)
	}
	if sum(getBody(t, fmt.Sprintf("%s/api/reports/%d/download", d2.URL(), r.ID))) != sum(content) {
		t.Errorf("after restart: report %d differs", r.ID)
	}
	if err := stopWith(t, d2, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v\n%s", err, d2.Log())
	}
	if strings.Contains(d2.Log(), password) {
		t.Fatalf("log holds the password:\n%s", d2.Log())
	}
}
