package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/httpapi"
)

// clientsFolder writes a clients.dir as scripts/dist.sh lays it out: one
// file per target and their checksums.txt.
func clientsFolder(t *testing.T) (dir string, files map[string][]byte) {
	t.Helper()
	dir = t.TempDir()
	files = map[string][]byte{}
	var sums strings.Builder
	for _, target := range httpapi.ClientTargets {
		name := "reportctl-" + target
		data := []byte("binary of " + name)
		files[name] = data
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		sums.WriteString(hex.EncodeToString(sum[:]) + "  " + name + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, files
}

func TestDownloads(t *testing.T) {
	dir, files := clientsFolder(t)
	for _, mode := range []httpapi.StatusMode{httpapi.StatusSpec, httpapi.StatusConventional} {
		e := newAPIEnv(t, envOpts{mode: mode, clientsDir: dir})
		for _, target := range httpapi.ClientTargets {
			r := e.do(apiCall{method: "GET", path: "/dl/reportctl/" + target})
			wantStatus(t, r, 200)
			if !bytes.Equal(r.body, files["reportctl-"+target]) {
				t.Fatalf("%s: body %q", target, r.body)
			}
			want := `attachment; filename="reportctl"`
			if strings.HasSuffix(target, ".exe") {
				want = `attachment; filename="reportctl.exe"`
			}
			if got := r.header.Get("Content-Disposition"); got != want {
				t.Fatalf("%s: Content-Disposition %q, want %q", target, got, want)
			}
		}
		r := e.do(apiCall{method: "GET", path: "/dl/checksums.txt"})
		wantStatus(t, r, 200)
		if n := strings.Count(string(r.body), "\n"); n != len(httpapi.ClientTargets) {
			t.Fatalf("checksums.txt has %d lines: %s", n, r.body)
		}

		// Unknown platforms and a missing file: 404 in both modes, saying what exists.
		for path, msg := range map[string]string{
			"/dl/reportctl/plan9-386":     "linux-amd64, linux-arm64",
			"/dl/reportctl/windows-amd64": "windows-amd64.exe",
			"/dl/reportctl/linux-riscv64": "no reportctl for",
		} {
			r := e.do(apiCall{method: "GET", path: path, raw: true})
			if r.status != 404 || !strings.Contains(string(r.body), `"type":"NotFoundError"`) || !strings.Contains(string(r.body), msg) {
				t.Fatalf("GET %s: %s", path, r)
			}
		}

		r = e.do(apiCall{method: "GET", path: "/dl/install.sh"})
		wantStatus(t, r, 200)
		if !strings.Contains(string(r.body), "server='"+e.base+"'") {
			t.Fatalf("install.sh does not name this server (%s):\n%s", e.base, r.body)
		}
	}
}

func TestDownloadsWithoutClientsDir(t *testing.T) {
	for _, dir := range []string{"", filepath.Join(t.TempDir(), "absent")} {
		e := newAPIEnv(t, envOpts{mode: httpapi.StatusSpec, clientsDir: dir})
		for _, p := range []string{"/dl/reportctl/linux-amd64", "/dl/checksums.txt"} {
			r := e.do(apiCall{method: "GET", path: p})
			if r.status != 404 || !strings.Contains(string(r.body), "set clients.dir (REPORTD_CLIENTS_DIR)") {
				t.Fatalf("clients.dir %q: GET %s: %s", dir, p, r)
			}
		}
	}
	// A folder without the one binary asked for.
	dir, _ := clientsFolder(t)
	os.Remove(filepath.Join(dir, "reportctl-darwin-arm64"))
	e := newAPIEnv(t, envOpts{mode: httpapi.StatusSpec, clientsDir: dir})
	r := e.do(apiCall{method: "GET", path: "/dl/reportctl/darwin-arm64"})
	if r.status != 404 || !strings.Contains(string(r.body), "reportctl-darwin-arm64 is not in clients.dir") {
		t.Fatalf("missing binary: %s", r)
	}
}
