package watch

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testbin"
)

// TestFirstUploadTokenChangesOnlyWrites does what a team did: a running
// watch publishes an HTML report (and prints its site link); then an
// administrator creates the server's first token, an upload token. Reads
// stay anonymous, the earlier site link keeps working, and the running
// watch, whose next upload is refused, stops at once with a message that
// says a token is now required instead of retrying for ever. Its file
// stays queued: the next run, given the token, publishes it (and nothing
// twice).
func TestFirstUploadTokenChangesOnlyWrites(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "", data)
	anon := newClient(t, d.URL())
	project := newProject(t, anon)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	w := startWatch(t, d.URL(), watchArgs(dir, state, project)...)
	w.ev.waitEvent(t, evIdle, 1)
	first := write(t, filepath.Join(dir, "first.html"), "<!DOCTYPE html><title>first</title><p>first</p>")
	w.ev.waitEvent(t, evPublished, 1)
	var siteURL string
	for _, e := range w.ev.all() {
		if e.Event == evPublished {
			siteURL = e.SiteURL
		}
	}
	if siteURL == "" {
		t.Fatalf("no site link for the HTML report; log:\n%s", w.ev)
	}

	// The first token: an upload token for project's CI.
	cmd := testbin.Command(reportdBin, "token", "create", "--scope", "upload", "--project", strconv.FormatInt(project, 10),
		"--config", testbin.EmptyConfig, "--data-dir", data)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("token create: %v\n%s", err, errb.String())
	}
	token := strings.TrimSpace(out.String())
	said := strings.Join(strings.Fields(errb.String()), " ")
	for _, want := range []string{"this is the first token", "every change needs a token", "What does not change: reads stay open", "do not expire"} {
		if !strings.Contains(said, want) {
			t.Errorf("token create did not say %q:\n%s", want, errb.String())
		}
	}

	// Reads stay anonymous, and so does the site link handed out before.
	if rs := reports(t, anon, project); len(rs["first.html"]) != 1 {
		t.Fatalf("anonymous list after the first token: %v", rs)
	}
	if b := download(t, d.URL(), reports(t, anon, project)["first.html"][0].ID); !bytes.Equal(b, first) {
		t.Errorf("anonymous download after the first token: %q", b)
	}
	if st, body := getSite(t, siteURL); st != http.StatusOK || !strings.Contains(body, "<p>first</p>") {
		t.Errorf("the earlier site link after the first token: %d %.200s", st, body)
	}

	// The running watch: its next upload is refused; it stops and says why.
	write(t, filepath.Join(dir, "second.md"), "# second\n")
	var err error
	select {
	case err = <-w.done:
		w.cancel()
		w.cancel = nil
	case <-time.After(90 * time.Second):
		t.Fatalf("watch still running after its upload was refused; log:\n%s", w.ev)
	}
	if exitcode.Of(err) != exitcode.Auth || !report.IsKind(err, report.Unauthorized) || !strings.Contains(err.Error(), "REPORTCTL_TOKEN") ||
		!strings.Contains(err.Error(), "server now requires one") || !strings.Contains(err.Error(), "files stay queued") {
		t.Errorf("watch ended with %v (exit %d)", err, exitcode.Of(err))
	}
	t.Logf("watch ended with: %v", err)
	if n := w.ev.count(evRetry); n > 0 {
		t.Errorf("watch retried a refused upload %d time(s); log:\n%s", n, w.ev)
	}
	if n := w.ev.count(evError); n != 1 {
		t.Errorf("%d error events, want the one that says a token is required; log:\n%s", n, w.ev)
	}

	// A one-off upload without the token says the same (reportctl upload).
	_, err = anon.UploadReport(context.Background(), report.ReportUpload{ProjectID: project, FileType: report.MD,
		File: report.Upload{FileName: "x.md", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("# x\n")), nil }}})
	if !report.IsKind(err, report.Unauthorized) || !strings.Contains(err.Error(), "no token was sent") {
		t.Errorf("an upload without a token: %v", err)
	}

	// Given the token, the next run publishes what was queued, once.
	ev := &events{}
	root := rootWithToken(d.URL(), token, ev)
	root.SetArgs(append([]string{"watch", "--once", "--json"}, watchArgs(dir, state, project)...))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("watch --once with the token: %v\n%s", err, ev)
	}
	assertPublished(t, d, anon, project, map[string][]byte{"first.html": first, "second.md": []byte("# second\n")})
}

// getSite fetches a content-origin link ({id}.localhost names this
// machine: dial the link's port on loopback) without following redirects.
func getSite(t *testing.T, link string) (int, string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", u.Port())
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := cl.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// rootWithToken is rootWith with a token, as --token gives one.
func rootWithToken(svcURL, token string, out io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "reportctl", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().Bool("json", false, "")
	root.AddCommand(NewCommand(Deps{
		Client: func() (report.Service, error) {
			return client.New(client.Options{Server: svcURL, Token: token, Retries: 1, RetryWait: 50 * time.Millisecond, Timeout: 30 * time.Second})
		},
		Stdout: out, Stderr: out,
	}))
	return root
}
