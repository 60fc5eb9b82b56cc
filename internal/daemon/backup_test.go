package daemon

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
)

// TestBackupOnlineUnderLoad takes backups from a serving daemon while
// uploads and deletes run, restores the last one into a new directory, and
// checks the restored store: clean, every acknowledged-before-backup report
// present, every restored report byte-identical to what was uploaded.
func TestBackupOnlineUnderLoad(t *testing.T) {
	c := testConfig(t, t.TempDir())
	s, _ := startServer(t, c)
	c.Addr = s.Addr()
	base := "http://" + s.Addr()
	proj := createProject(t, base, "backup")

	var mu sync.Mutex
	sums := map[int64]string{} // every report ever acknowledged
	put := func(i int) int64 {
		content := markdown(fmt.Sprintf("r%d", i), 2000+i*37)
		st, r, e, err := upload(httpClient, base, proj.ID, "md", fmt.Sprintf("r%d.md", i), content)
		if err != nil || st != http.StatusCreated {
			t.Errorf("upload %d: %d %v %v", i, st, e, err)
			return 0
		}
		mu.Lock()
		sums[r.ID] = sum(content)
		mu.Unlock()
		return r.ID
	}
	var before []int64
	for i := range 20 {
		before = append(before, put(i))
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var n atomic.Int64
	n.Store(100)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				id := put(int(n.Add(1)))
				if w == 0 && id%3 == 0 { // one writer also deletes
					req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/reports/%d", base, id), nil)
					if resp, err := httpClient.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}
		}()
	}
	out := filepath.Join(t.TempDir(), "backup.tar")
	for range 3 {
		m, err := Backup(ctx, c, out, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Missing) != 0 {
			t.Fatalf("backup lists missing files %v", m.Missing)
		}
	}
	cancel()
	wg.Wait()

	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(out, restored); err != nil {
		t.Fatal(err)
	}
	rc := testConfig(t, restored)
	rep, err := Check(context.Background(), rc, false)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean(false) {
		t.Fatalf("restored store is not clean: %+v", rep)
	}
	rs, _ := startServer(t, rc)
	rbase := "http://" + rs.Addr()
	var reps []apiReport
	getJSON(t, rbase+"/api/reports", &reps)
	have := map[int64]bool{}
	for _, r := range reps {
		have[r.ID] = true
		got := getBody(t, fmt.Sprintf("%s/api/reports/%d/download", rbase, r.ID))
		if sum(got) != sums[r.ID] {
			t.Errorf("restored report %d differs from the upload", r.ID)
		}
	}
	for _, id := range before {
		if !have[id] {
			t.Errorf("report %d, acknowledged before the backup, is not in it", id)
		}
	}
	var p apiProject
	getJSON(t, fmt.Sprintf("%s/api/projects/%d", rbase, proj.ID), &p)
	if p.ReportCount != int64(len(reps)) || p.TodayNewReports != int64(len(reps)) {
		t.Errorf("restored project counts %d/%d, real %d", p.ReportCount, p.TodayNewReports, len(reps))
	}
	t.Logf("restored %d reports (of %d uploaded)", len(reps), len(sums))
}

// TestBackupOfflineAndCLI backs up a stopped daemon's directory through the
// command line, restores it, and refuses to restore over data.
func TestBackupOfflineAndCLI(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir)
	s, stop := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "offline")
	content := markdown("offline", 5000)
	if st, _, e, err := upload(httpClient, base, proj.ID, "md", "o.md", content); st != http.StatusCreated {
		t.Fatalf("upload: %d %v %v", st, e, err)
	}
	stop()

	out := filepath.Join(t.TempDir(), "b.tar")
	runCLI(t, 0, "backup", "--out", out, "--data-dir", dir)
	restored := filepath.Join(t.TempDir(), "r")
	stderr := runCLI(t, 0, "restore", "--in", out, "--data-dir", restored)
	if !strings.Contains(stderr, "no problems") {
		t.Errorf("restore output: %s", stderr)
	}
	// Not into a directory that holds anything.
	stderr = runCLI(t, 1, "restore", "--in", out, "--data-dir", dir)
	if !strings.Contains(stderr, "not empty") {
		t.Errorf("restore over data: %s", stderr)
	}
	got, err := os.ReadFile(filepath.Join(restored, "uploads", "reports", "1.md"))
	if err != nil || sum(got) != sum(content) {
		t.Fatalf("restored file: %v", err)
	}
}

// runCLI runs the reportd binary (cmd/reportd, whose command tree this
// package's tests cannot import) with the test's environment and checks
// its exit code; it returns stdout followed by stderr.
func runCLI(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bins.Path(t, "reportd"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("reportd %v: %v", args, err)
		}
		code = exit.ExitCode()
	}
	if code != wantCode {
		t.Fatalf("reportd %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, wantCode, stdout.String(), stderr.String())
	}
	return stdout.String() + stderr.String()
}

// TestRestoreRefusesBadArchives: tampered bytes, a cut-off archive, path
// traversal and a symlink entry all fail, and leave the target empty.
func TestRestoreRefusesBadArchives(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir)
	s, stop := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "tamper")
	upload(httpClient, base, proj.ID, "md", "t.md", markdown("tamper", 3000))
	stop()
	good := filepath.Join(t.TempDir(), "good.tar")
	if _, err := Backup(context.Background(), c, good, ""); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}

	tampered := rewriteTar(t, raw, func(h *tar.Header, body []byte) (*tar.Header, []byte) {
		if strings.HasPrefix(h.Name, "uploads/reports/") {
			body = bytes.Clone(body)
			body[10] ^= 1
		}
		return h, body
	})
	truncated := raw[:len(raw)-3072] // the manifest and the end blocks are gone
	traversal := rewriteTar(t, raw, func(h *tar.Header, body []byte) (*tar.Header, []byte) {
		if strings.HasPrefix(h.Name, "uploads/reports/") {
			h.Name = "uploads/../../escape.md"
		}
		return h, body
	})
	symlink := rewriteTar(t, raw, func(h *tar.Header, body []byte) (*tar.Header, []byte) {
		if strings.HasPrefix(h.Name, "uploads/reports/") {
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, "/etc/passwd", 0
			return h, nil
		}
		return h, body
	})
	var noManifest bytes.Buffer
	{
		tr, tw := tar.NewReader(bytes.NewReader(raw)), tar.NewWriter(&noManifest)
		for h, err := tr.Next(); err == nil && h.Name != ops.ManifestName; h, err = tr.Next() {
			tw.WriteHeader(h)
			io.Copy(tw, tr)
		}
		tw.Close()
	}
	for name, archive := range map[string][]byte{"tampered": tampered, "truncated": truncated, "no-manifest": noManifest.Bytes(), "traversal": traversal, "symlink": symlink} {
		t.Run(name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), name+".tar")
			os.WriteFile(in, archive, 0o600)
			target := filepath.Join(t.TempDir(), "target")
			if _, err := Restore(in, target); err == nil {
				t.Fatal("restore accepted a bad archive")
			} else {
				t.Log(err)
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				entries, _ := os.ReadDir(target)
				t.Fatalf("restore left %d entries behind (%v)", len(entries), err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(target), "escape.md")); err == nil {
				t.Fatal("traversal entry escaped the target")
			}
		})
	}
}

func rewriteTar(t *testing.T, raw []byte, fn func(*tar.Header, []byte) (*tar.Header, []byte)) []byte {
	t.Helper()
	var out bytes.Buffer
	tr, tw := tar.NewReader(bytes.NewReader(raw)), tar.NewWriter(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		h, body = fn(h, body)
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	return out.Bytes()
}

// TestAdminAccess: /admin/backup needs the token when one is set, or the
// per-run admin key from the data directory; a loopback client with
// neither is refused (a reverse proxy on the host would be loopback too).
func TestAdminAccess(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.Auth.Token = "s3cret"
	s, _ := startServer(t, c)
	send := func(method, url, auth string) (int, []byte) {
		req, _ := http.NewRequest(method, url, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	get := func(url, token string) int {
		auth := ""
		if token != "" {
			auth = "Bearer " + token
		}
		st, _ := send("GET", url, auth)
		return st
	}
	// Refusals are the API's {error,type} body, with the API's status mode (spec: 500).
	wantRefused := func(what, method, url, auth string, kind report.Kind) {
		t.Helper()
		st, b := send(method, url, auth)
		var body struct{ Error, Type string }
		if err := json.Unmarshal(b, &body); err != nil || st != http.StatusInternalServerError ||
			body.Type != string(kind) || !strings.HasPrefix(body.Error, string(kind)+": ") {
			t.Errorf("%s: %d %s, want 500 and a %s body", what, st, b, kind)
		}
	}
	url := "http://" + s.Addr() + "/admin/backup"
	wantRefused("no token", "GET", url, "", report.Unauthorized)
	wantRefused("wrong token", "GET", url, "Bearer wrong", report.Unauthorized)
	wantRefused("token without scheme", "GET", url, "s3cret", report.Unauthorized)
	wantRefused("POST", "POST", url, "Bearer s3cret", report.MethodNotAllowed)
	wantRefused("unknown admin path", "GET", url+"x", "Bearer s3cret", report.NotFound)
	if st := get(url, "s3cret"); st != http.StatusOK {
		t.Errorf("right token: %d", st)
	}
	// The scheme is case-insensitive here as in the API (one check for both).
	if st, _ := send("GET", url, "bearer s3cret"); st != http.StatusOK {
		t.Errorf("lower-case scheme: %d", st)
	}
	// `reportd backup` sends the configured token.
	c.Addr = s.Addr()
	if _, err := Backup(context.Background(), c, filepath.Join(t.TempDir(), "b.tar"), ""); err != nil {
		t.Fatal(err)
	}

	c2 := testConfig(t, t.TempDir())
	s2, _ := startServer(t, c2)
	url2 := "http://" + s2.Addr() + "/admin/backup"
	wantRefused("loopback client without token or key", "GET", url2, "", report.Unauthorized)
	si, ok := readServeInfo(c2.DataDir)
	if !ok || si.AdminKey == "" {
		t.Fatalf("serve file has no admin key: %+v", si)
	}
	req, _ := http.NewRequest("GET", url2, nil)
	req.Header.Set(adminKeyHeader, si.AdminKey)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the admin key: %d", resp.StatusCode)
	}
	if fi, err := os.Stat(filepath.Join(c2.DataDir, serveFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("serve file must be 0600: %v %v", fi, err)
	}
	// `reportd backup --data-dir` finds the daemon and its key by itself.
	c2.Addr = s2.Addr()
	if _, err := Backup(context.Background(), c2, filepath.Join(t.TempDir(), "b2.tar"), ""); err != nil {
		t.Fatal(err)
	}
	if st := get("http://"+s2.Addr()+"/api/reports/ping", ""); st != http.StatusOK {
		t.Errorf("the API itself: %d", st)
	}
}
