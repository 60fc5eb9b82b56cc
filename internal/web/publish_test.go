package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/cli"
)

// siteDaemon is the real reportd binary with an auth token and the
// dashboard. With auth.reads every content URL it hands out is signed and
// exchanged for a host-only cookie of the report's origin
// (http://{id}.localhost:<port>); without, reads are public and so are
// the content origin's plain URLs.
type siteDaemon struct {
	*daemon
	token   string
	project int64
	reads   bool // auth.reads: only then are content URLs signed
}

// reads protects reads with the token too (auth.reads).
func startSiteDaemon(t *testing.T, reads bool) *siteDaemon {
	t.Helper()
	const token = "site-e2e-admin-token-0123456789abcdef"
	d := startDaemon(t, fmt.Sprintf("dashboard: true\nauth:\n  token: %s\n  reads: %v\n", token, reads))
	p := d.call(t, token, "POST", "/api/projects", json.RawMessage(`{"name":"sites"}`))
	id, _ := p["id"].(float64)
	if id == 0 {
		t.Fatalf("create project: %v", p)
	}
	return &siteDaemon{daemon: d, token: token, project: int64(id), reads: reads}
}

// published is what `reportctl upload DIR --json` prints for one folder.
type published struct {
	ID        int64  `json:"id"`
	Kind      string `json:"kind"`
	Entry     string `json:"entry"`
	Files     int    `json:"files"`
	SiteURL   string `json:"siteUrl"`
	Generator string `json:"generator"`
}

// reportctl runs the real client in this process (cli.Run, as
// cmd/reportctl does) with no config file and no REPORTCTL_* variables of
// the developer's, and returns its exit status, stdout and stderr.
func reportctl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "REPORTCTL_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	code := cli.Run(t.Context(), &cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return code, out.String(), errOut.String()
}

// publish uploads the folder dir as one site with `reportctl upload DIR
// --json` and returns the report it printed; the site URL must be one of
// the per-report origins, signed exactly when reads are protected (with
// public reads a token protects writes only: links are plain and permanent).
func (d *siteDaemon) publish(t *testing.T, dir string, extra ...string) published {
	t.Helper()
	args := append([]string{"upload", dir, "--server", d.base, "--token", d.token, "--project", fmt.Sprint(d.project), "--json"}, extra...)
	code, stdout, stderr := reportctl(t, args...)
	if code != 0 {
		t.Fatalf("reportctl %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	var out []published
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out) != 1 {
		t.Fatalf("reportctl upload --json: %v\n%s", err, stdout)
	}
	p := out[0]
	u, err := url.Parse(p.SiteURL)
	if p.Kind != "site" || err != nil || u.Hostname() != fmt.Sprintf("%d.localhost", p.ID) || u.Query().Has("reportd_sig") != d.reads {
		t.Fatalf("published %s: kind %q, siteUrl %q (want a URL on http://%d.localhost:<port>, signed: %v)", filepath.Base(dir), p.Kind, p.SiteURL, p.ID, d.reads)
	}
	return p
}

// origin is scheme://host:port of a URL.
func origin(t *testing.T, s string) string {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u.Scheme + "://" + u.Host
}
