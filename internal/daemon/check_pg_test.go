package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// TestPostgresCheckAndTokens: with storage: postgres, `reportd token`
// writes the shared tokens table and a serving daemon picks the token up
// (and its revocation) without a restart; `reportd check` runs beside the
// daemon, finds a drifted counter, a missing object and an old orphan,
// and --repair fixes what it can and names the rest.
func TestPostgresCheckAndTokens(t *testing.T) {
	dir := t.TempDir()
	c := postgresConfig(t, dir)
	s, _ := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "checked")
	var ids []int64
	for i := range 2 {
		st, r, e, err := upload(httpClient, base, proj.ID, "md", fmt.Sprintf("c%d.md", i), markdown(fmt.Sprint("c", i), 900))
		if err != nil || st != 201 {
			t.Fatalf("upload: %d %+v %v", st, e, err)
		}
		ids = append(ids, r.ID)
	}
	t.Setenv("REPORTD_STORAGE", "postgres")
	t.Setenv("REPORTD_POSTGRES_DSN", c.Postgres.DSN)
	t.Setenv("REPORTD_DATA_DIR", dir)

	if out := runCLI(t, 0, "check"); !strings.Contains(out, "checked: 2 reports, 0 covers; 0 missing files, 0 orphans, 0 counter/index drifts") {
		t.Fatalf("check on a clean store: %s", out)
	}

	// Tokens: created by the command, seen by the daemon.
	var created createdToken
	if err := json.Unmarshal([]byte(runCLI(t, 0, "token", "create", "--scope", "upload", "--project", fmt.Sprint(proj.ID), "--name", "ci", "--json")), &created); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Secret, "rpt_") || created.Token.Scope != tokens.Upload {
		t.Fatalf("created: %+v", created)
	}
	waitFor(t, "the daemon to see the token", s.Tokens().Enabled)
	if _, _, e, _ := upload(httpClient, base, proj.ID, "md", "anon.md", markdown("anon", 100)); e.Type != "UnauthorizedError" {
		t.Fatalf("anonymous upload once a token exists: %+v", e)
	}
	if p, err := s.Tokens().Authenticate(created.Secret); err != nil || p.ID != created.Token.ID {
		t.Fatalf("the daemon does not know the new token: %v", err)
	}
	if out := runCLI(t, 0, "token", "list"); !strings.Contains(out, created.Token.ID) || !strings.Contains(out, "active") {
		t.Fatalf("token list: %s", out)
	}
	runCLI(t, 0, "token", "revoke", created.Token.ID)
	waitFor(t, "the daemon to see the revocation", func() bool {
		_, err := s.Tokens().Authenticate(created.Secret)
		return err != nil && strings.Contains(err.Error(), "revoked")
	})
	if out := runCLI(t, 1, "token", "create", "--scope", "read", "--project", "999"); !strings.Contains(out, "project 999 does not exist") {
		t.Fatalf("token for a missing project: %s", out)
	}

	// Damage: a drifted count, a missing object, an old orphan and a young one.
	conn, err := pgx.Connect(context.Background(), c.Postgres.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "UPDATE projects SET report_count = 7 WHERE id = $1", proj.ID); err != nil {
		t.Fatal(err)
	}
	var gone string
	if err := conn.QueryRow(context.Background(), "SELECT file_path FROM reports WHERE id = $1", ids[0]).Scan(&gone); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(gone))); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "uploads", "reports", "9999.md")
	young := filepath.Join(dir, "uploads", "reports", "9998.md")
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, []byte("# orphan\n"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	out := runCLI(t, 1, "check")
	for _, want := range []string{"missing file: report " + fmt.Sprint(ids[0]), "orphan: /uploads/reports/9999.md", "reportCount is 7, real count 2", "run with --repair"} {
		if !strings.Contains(out, want) {
			t.Errorf("check: no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "9998.md") {
		t.Errorf("check reports a young object (an upload in flight?) as an orphan:\n%s", out)
	}
	out = runCLI(t, 1, "check", "--repair")
	for _, want := range []string{"repaired: fixed: project", "repaired: removed orphan /uploads/reports/9999.md", "not fixed: still missing (restore the object or delete the report): " + gone} {
		if !strings.Contains(out, want) {
			t.Errorf("check --repair: no %q in\n%s", want, out)
		}
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("old orphan still there: %v", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("young object removed: %v", err)
	}
	var p apiProject
	getJSON(t, fmt.Sprintf("%s/api/projects/%d", base, proj.ID), &p)
	if p.ReportCount != 2 || p.TodayNewReports != 2 {
		t.Errorf("after repair: %+v", p)
	}
}

// TestPostgresAdminTokens: /admin/tokens works with storage: postgres
// (it refused before tokens had a table): create, list, revoke, and the
// tokens table holds the digest only.
func TestPostgresAdminTokens(t *testing.T) {
	dir := t.TempDir()
	c := postgresConfig(t, dir)
	s, _ := startServer(t, c)
	call := adminAPI(t, s, dir)
	admin := func(method, path, body string, out any) int {
		t.Helper()
		st, b := call(method, path, body)
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatalf("%s %s: %d %s", method, path, st, b)
			}
		}
		return st
	}
	var created createdToken
	if st := admin("POST", "/admin/tokens", `{"scope":"admin","name":"ops"}`, &created); st != http.StatusCreated && st != http.StatusOK {
		t.Fatalf("create: %d %+v", st, created)
	}
	var list []tokens.Token
	admin("GET", "/admin/tokens", "", &list)
	if len(list) != 1 || list[0].ID != created.Token.ID || list[0].Name != "ops" {
		t.Fatalf("list: %+v", list)
	}
	if st := bearer(t, "POST", "http://"+s.Addr()+"/api/projects", created.Secret, `{"name":"by token"}`); st != http.StatusCreated {
		t.Fatalf("create a project with the new admin token: %d", st)
	}
	conn, err := pgx.Connect(context.Background(), c.Postgres.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	secret := created.Secret[strings.LastIndex(created.Secret, "_")+1:]
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM tokens t
		WHERE position($1 in t::text) > 0 OR position(convert_to($1, 'UTF8') in hash) > 0`, secret).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the tokens table holds the secret: %d %v", n, err)
	}
	var revoked tokens.Token
	admin("DELETE", "/admin/tokens/"+created.Token.ID, "", &revoked)
	if revoked.RevokedAt == nil {
		t.Fatalf("revoke: %+v", revoked)
	}
}

// TestPostgresCheckSite: the object a site report owns is its manifest
// (its filePath names the entry page, which is no object): present, the
// store is clean; removed, the report is named missing.
func TestPostgresCheckSite(t *testing.T) {
	dir := t.TempDir()
	c := postgresConfig(t, dir)
	s, stop := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "site-checked")
	st, r, e, err := upload(httpClient, base, proj.ID, "html", "site.zip", siteZip(t, map[string]string{"index.html": "<p>i</p>", "a.css": "p{}"}))
	if err != nil || st != 201 {
		t.Fatalf("upload: %d %+v %v", st, e, err)
	}
	stop()
	if rep, err := Check(context.Background(), c, false); err != nil || !rep.Clean(false) || rep.Counts["reports"] != 1 {
		t.Fatalf("check with a site: %+v %v", rep, err)
	}
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(report.SiteManifestPath(r.ID)))); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(context.Background(), c, false)
	if err != nil || len(rep.MissingFiles) != 1 || rep.MissingFiles[0].Report != r.ID {
		t.Fatalf("check without the site's manifest: %+v %v", rep, err)
	}
}
