package cli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/exitcode"
)

// deadServer is an address nothing listens on: any request made there ends
// in exit status 5, so a test expecting another status also proves that no
// request was attempted.
func deadServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// isolate clears every REPORTCTL_* variable and points the default config
// file into an empty temp dir, so the developer's own settings do not leak in.
func isolate(t *testing.T) string {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, envPrefix+"_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	// The CI systems' markers too: a suite run inside a pipeline would
	// otherwise attach that pipeline's build metadata to every upload.
	for _, k := range []string{"GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL", "BUILDKITE", "CIRCLECI", "TF_BUILD", "CI", "DRONE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	return dir
}

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, tty bool, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: tty}
	code := Run(t.Context(), io, args)
	return result{code, out.String(), errOut.String()}
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUsageErrors: bad invocations exit 2 (or 4 for an empty match) before
// any request is made.
func TestUsageErrors(t *testing.T) {
	dir := isolate(t)
	html := writeFile(t, filepath.Join(dir, "a.html"), "<p>x</p>")
	txt := writeFile(t, filepath.Join(dir, "notes.txt"), "x")
	srv := deadServer(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown command", []string{"bogus"}, exitcode.Usage, "unknown command"},
		{"unknown flag", []string{"ping", "--bogus"}, exitcode.Usage, "unknown flag"},
		{"ping takes no args", []string{"ping", "x"}, exitcode.Usage, "unknown command"},
		{"get needs id", []string{"projects", "get"}, exitcode.Usage, "accepts 1 arg"},
		{"id must be a number", []string{"projects", "get", "abc"}, exitcode.Usage, "invalid project id"},
		{"id must be positive", []string{"reports", "get", "0"}, exitcode.Usage, "invalid report id"},
		{"create needs name", []string{"projects", "create"}, exitcode.Usage, "--name is required"},
		{"update needs a change", []string{"projects", "update", "1"}, exitcode.Usage, "nothing to change"},
		{"report update needs a change", []string{"reports", "update", "1"}, exitcode.Usage, "nothing to change"},
		{"bad file type", []string{"reports", "update", "1", "--file-type", "exe"}, exitcode.Usage, "--file-type"},
		{"bad --project", []string{"reports", "list", "--project", "x"}, exitcode.Usage, "invalid project id"},
		{"download extra arg", []string{"reports", "download", "1", "2"}, exitcode.Usage, "accepts 1 arg"},
		{"upload needs files", []string{"upload", "--project", "1"}, exitcode.Usage, "requires at least 1 arg"},
		{"upload needs project", []string{"upload", html}, exitcode.Usage, "--project ID or --project-name"},
		{"upload one project", []string{"upload", html, "--project", "1", "--project-name", "x"}, exitcode.Usage, "not both"},
		{"create-project needs name", []string{"upload", html, "--project", "1", "--create-project"}, exitcode.Usage, "--create-project needs"},
		{"jobs >= 1", []string{"upload", html, "--project", "1", "-j", "0"}, exitcode.Usage, "-j must be"},
		{"jobs numeric", []string{"upload", html, "--project", "1", "-j", "x"}, exitcode.Usage, "invalid argument"},
		{"bad --type", []string{"upload", html, "--project", "1", "--type", "docx"}, exitcode.Usage, "--type"},
		{"unknown extension", []string{"upload", txt, "--project", "1"}, exitcode.Usage, "use --type"},
		{"directory of another type", []string{"upload", dir, "--project", "1", "--type", "md"}, exitcode.Usage, "uploaded as an html site: --type md does not apply"},
		{"entry without a folder", []string{"upload", html, "--project", "1", "--entry", "a.html"}, exitcode.Usage, "--entry is for folders"},
		{"entry not in the folder", []string{"upload", dir, "--project", "1", "--entry", "nope.html"}, exitcode.Usage, "--entry nope.html: no such file in " + dir},
		{"entry not a site name", []string{"upload", dir, "--project", "1", "--entry", "../a.html"}, exitcode.Usage, "--entry: invalid file name"},
		{"bad pattern", []string{"upload", "[", "--project", "1"}, exitcode.Usage, "invalid pattern"},
		{"no match", []string{"upload", filepath.Join(dir, "*.md"), "--project", "1"}, exitcode.NoMatch, "no file matched"},
		{"missing file", []string{"upload", filepath.Join(dir, "gone.html"), "--project", "1"}, exitcode.NoMatch, "no file matched"},
		{"one of two unmatched", []string{"upload", html, filepath.Join(dir, "**", "*.pdf"), "--project", "1"}, exitcode.NoMatch, "*.pdf"},
		{"negative retries", []string{"ping", "--retries", "-1"}, exitcode.Usage, "retries"},
		{"bad server", []string{"ping", "--server", "ftp://x"}, exitcode.Usage, "invalid server URL"},
		{"bad duration", []string{"ping", "--timeout", "soon"}, exitcode.Usage, "invalid argument"},
		{"missing --config", []string{"ping", "--config", filepath.Join(dir, "none.yaml")}, exitcode.Usage, "config file"},
		{"unreachable", []string{"ping", "--retries", "1", "--retry-wait", "1ms"}, exitcode.Unreachable, "unreachable after 2 attempt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, false, append([]string{"--server", srv}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) {
				t.Fatalf("exit %d, want %d; stderr %q should contain %q", r.code, tt.code, r.stderr, tt.msg)
			}
			if r.stdout != "" {
				t.Fatalf("stdout should be empty, got %q", r.stdout)
			}
		})
	}
}

// TestLocalCommands need no server.
func TestLocalCommands(t *testing.T) {
	dir := isolate(t)
	html := writeFile(t, filepath.Join(dir, "site", "index.html"), "<p>x</p>")
	writeFile(t, filepath.Join(dir, "site", "style.css"), "p{}")
	writeFile(t, filepath.Join(dir, "site", "deep", "er", "notes.md"), "# n")
	srv := deadServer(t)

	r := run(t, false, "--server", srv, "upload", filepath.Join(dir, "site", "**"), html, "--project", "3", "--dry-run", "--json")
	if r.code != 0 {
		t.Fatalf("dry run: %+v", r)
	}
	want := `[
  {
    "localPath": "` + filepath.Join(dir, "site", "deep", "er", "notes.md") + `",
    "fileName": "notes.md",
    "fileType": "md",
    "size": 3,
    "projectId": 3,
    "kind": "file"
  },
  {
    "localPath": "` + html + `",
    "fileName": "index.html",
    "fileType": "html",
    "size": 8,
    "projectId": 3,
    "kind": "file"
  }
]
`
	// Pattern order, then lexical walk order (deep/ before index.html); the
	// literal index.html is a duplicate and appears once.
	if r.stdout != want {
		t.Fatalf("dry run output:\n%s", r.stdout)
	}

	// A folder is one site: its files together, zipped on the fly.
	r = run(t, false, "--server", srv, "upload", filepath.Join(dir, "site"), "--entry", "deep/er/notes.md", "--project", "3", "--dry-run", "--json")
	want = `[
  {
    "localPath": "` + filepath.Join(dir, "site") + `",
    "fileName": "site",
    "fileType": "html",
    "size": 14,
    "projectId": 3,
    "kind": "site",
    "files": 3
  }
]
`
	if r.code != 0 || r.stdout != want {
		t.Fatalf("dry run of a folder: %+v", r)
	}

	r = run(t, false, "--server", srv, "upload", filepath.Join(dir, "nothing", "*.html"), "--project", "3", "--allow-empty", "--json")
	if r.code != 0 || r.stdout != "[]\n" || !strings.Contains(r.stderr, "no file matched") {
		t.Fatalf("allow-empty: %+v", r)
	}

	r = run(t, false, "version", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"version":`) || !strings.Contains(r.stdout, `"goVersion":`) {
		t.Fatalf("version: %+v", r)
	}
	r = run(t, false, "--version")
	if r.code != 0 || r.stdout != "reportctl "+Version()+"\n" {
		t.Fatalf("--version: %+v", r)
	}
	r = run(t, false, "help", "environment")
	for _, v := range []string{"REPORTCTL_SERVER", "REPORTCTL_TOKEN", "REPORTCTL_CONFIG", "REPORTCTL_TIMEOUT", "REPORTCTL_CONNECT_TIMEOUT", "REPORTCTL_RETRIES", "REPORTCTL_RETRY_WAIT", "REPORTCTL_RETRY_MAX_WAIT", "EXIT STATUS"} {
		if !strings.Contains(r.stdout, v) {
			t.Errorf("help environment lacks %s", v)
		}
	}
	r = run(t, false, "upload", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "EXIT STATUS") || !strings.Contains(r.stdout, "130") {
		t.Fatalf("help: %+v", r)
	}
}

// TestHostTypoFailsFast: a server name that does not resolve ends at once
// with exit status 5 and says which name, with the default retry settings
// that would otherwise wait 16 s or more.
func TestHostTypoFailsFast(t *testing.T) {
	isolate(t)
	start := time.Now()
	r := run(t, false, "--server", "http://reportd.example.invalid:8080", "ping")
	took := time.Since(start)
	if r.code != exitcode.Unreachable {
		t.Fatalf("exit %d, want %d: %+v", r.code, exitcode.Unreachable, r)
	}
	if !strings.Contains(r.stderr, `cannot resolve host name "reportd.example.invalid"`) || strings.Contains(r.stderr, "retrying") {
		t.Fatalf("stderr %q: want the name that failed and no retry", r.stderr)
	}
	// The default retries wait 16 s at least; the bound leaves room for a busy machine.
	if took > 12*time.Second {
		t.Fatalf("took %v, want an immediate failure", took)
	}
}
