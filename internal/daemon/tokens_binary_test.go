package daemon

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/tokens"
)

// runReportd runs the real binary and returns stdout and stderr apart.
func runReportd(t *testing.T, wantOK bool, args ...string) (string, string) {
	t.Helper()
	cmd := testbin.Command(bins.Path(t, "reportd"), append(args, "--config", testbin.EmptyConfig)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if (err == nil) != wantOK {
		t.Fatalf("reportd %v: %v\nstdout: %s\nstderr: %s", args, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

func bearer(t *testing.T, method, url, token string, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestTokenCommands: `reportd token` offline (no daemon: the store
// directly) and online (the running daemon holds bbolt's lock: the admin
// route, with the key from the serve file), and only hashes on disk.
func TestTokenCommands(t *testing.T) {
	dir := t.TempDir()
	// An admin command never creates a store: run where there is none, it
	// names the data directory it looked in and leaves nothing behind.
	_, e := runReportd(t, false, "token", "create", "--scope", "admin", "--data-dir", dir)
	if !strings.Contains(e, "no reportd store in the data directory "+dir) || !strings.Contains(e, "--data-dir") {
		t.Errorf("token create without a store said %q", e)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("token create without a store left %v in the data directory", names)
	}
	for _, cmd := range [][]string{{"token", "list"}, {"backup", "--out", filepath.Join(t.TempDir(), "b.tar")}, {"check"}} {
		if _, e := runReportd(t, false, append(cmd, "--data-dir", dir)...); !strings.Contains(e, "no reportd store in the data directory "+dir) {
			t.Errorf("%v without a store said %q", cmd, e)
		}
	}
	// The daemon creates the store; offline, an admin token then.
	stopWith(t, startReportd(t, dir), syscall.SIGTERM)
	adminSecret, info := runReportd(t, true, "token", "create", "--scope", "admin", "--name", "ops", "--data-dir", dir)
	adminSecret = strings.TrimSpace(adminSecret)
	if !strings.HasPrefix(adminSecret, "rpt_") || !strings.Contains(info, "shown only this once") {
		t.Fatalf("create printed %q / %q", adminSecret, info)
	}
	runReportd(t, false, "token", "create", "--scope", "upload", "--project", "1", "--data-dir", dir) // no project 1 yet
	runReportd(t, false, "token", "create", "--scope", "admin", "--project", "1", "--data-dir", dir)
	runReportd(t, false, "token", "create", "--scope", "root", "--data-dir", dir)

	p := startReportd(t, dir)
	if st := bearer(t, "POST", at(p, "/api/projects"), "", `{"name":"p"}`); st == http.StatusCreated {
		t.Fatal("the API is open although a token exists")
	}
	if st := bearer(t, "POST", at(p, "/api/projects"), adminSecret, `{"name":"p"}`); st != http.StatusCreated {
		t.Fatalf("create project with the admin token: %d", st)
	}
	// Online: the daemon holds the store.
	out, _ := runReportd(t, true, "token", "create", "--scope", "read", "--project", "1", "--expires", "30d", "--json", "--data-dir", dir)
	var created struct {
		Token  tokens.Token
		Secret string
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Token.Scope != tokens.Read || created.Token.ExpiresAt == nil {
		t.Fatalf("create --json: %v %s", err, out)
	}
	if st := bearer(t, "POST", at(p, "/api/projects"), created.Secret, `{"name":"q"}`); st == http.StatusCreated {
		t.Fatal("a read token created a project")
	}
	list, _ := runReportd(t, true, "token", "list", "--data-dir", dir)
	if !strings.Contains(list, created.Token.ID) || !strings.Contains(list, "ops") || strings.Contains(list, "rpt_") {
		t.Errorf("list:\n%s", list)
	}
	if _, e := runReportd(t, true, "token", "revoke", created.Token.ID, "--data-dir", dir); !strings.Contains(e, "revoked "+created.Token.ID) {
		t.Errorf("revoke said %q", e)
	}
	runReportd(t, false, "token", "revoke", "tok_0000000000000000", "--data-dir", dir)
	if st := bearer(t, "GET", at(p, "/api/projects"), created.Secret, ""); st == http.StatusOK {
		t.Error("a revoked token still reads")
	}
	if err := stopWith(t, p, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	log := p.Log()
	if !strings.Contains(log, "token created") || !strings.Contains(log, created.Token.ID) {
		t.Errorf("the daemon's log does not record the token by id:\n%s", log)
	}
	if strings.Contains(log, adminSecret[21:]) || strings.Contains(log, created.Secret[21:]) || strings.Contains(log, "rpt_") {
		t.Errorf("the daemon's log holds a secret:\n%s", log)
	}
	// Offline again: the list shows what the daemon wrote.
	out, _ = runReportd(t, true, "token", "list", "--json", "--data-dir", dir)
	var ts []tokens.Token
	if err := json.Unmarshal([]byte(out), &ts); err != nil || len(ts) != 2 {
		t.Fatalf("offline list: %v %s", err, out)
	}
	// The list is in id order, and ids are random: find each by its id.
	for _, tk := range ts {
		if revoked := tk.ID == created.Token.ID; (tk.RevokedAt != nil) != revoked {
			t.Errorf("offline list: %s revoked at %v, want revoked %v", tk.ID, tk.RevokedAt, revoked)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "reportd.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{adminSecret, created.Secret, adminSecret[22:], created.Secret[22:]} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the store file holds a secret (%q)", s[:8])
		}
	}
}

// A scoped token counts as a token for serving beyond loopback, and then
// the daemon refuses to revoke the last one (the API would open).
func TestTokenAllowsServingBeyondLoopback(t *testing.T) {
	dir := t.TempDir()
	// The way the refusal says: serve beyond loopback is refused (the
	// store is made), a token is created, and then serve starts.
	if _, e := runReportd(t, false, "serve", "--addr", "0.0.0.0:0", "--data-dir", dir); !strings.Contains(e, "reportd token create") {
		t.Fatalf("serving beyond loopback without a token said %q", e)
	}
	runReportd(t, true, "token", "create", "--scope", "admin", "--data-dir", dir)
	p := testbin.StartT(t, bins.Path(t, "reportd"), testbin.Options{Addr: "0.0.0.0:0", DataDir: dir})
	if !strings.Contains(p.Addr, ":") {
		t.Fatalf("addr %q", p.Addr)
	}
	out, _ := runReportd(t, true, "token", "list", "--json", "--data-dir", dir)
	var ts []tokens.Token
	json.Unmarshal([]byte(out), &ts)
	if len(ts) != 1 {
		t.Fatalf("list: %s", out)
	}
	_, e := runReportd(t, false, "token", "revoke", ts[0].ID, "--data-dir", dir)
	if !strings.Contains(e, "refusing to revoke the last token") {
		t.Errorf("revoking the last token said %q", e)
	}
}
