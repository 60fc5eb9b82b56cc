package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
)

// TestProgressOnlyOnTerminal: upload draws bars on stderr when it is a
// terminal, and never with --json or when piped.
func TestProgressOnlyOnTerminal(t *testing.T) {
	dir := isolate(t)
	env := apitest.Start(t, apitest.Options{})
	p := env.CreateProject("bars")
	file := writeFile(t, filepath.Join(dir, "big.html"), strings.Repeat("<p>lorem ipsum</p>\n", 20000))

	upload := func(errTTY bool, extra ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		io := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, ErrTTY: errTTY}
		args := append([]string{"--server", env.URL, "upload", file, "--project", itoa(p.ID)}, extra...)
		code := Run(t.Context(), io, args)
		return out.String(), errOut.String(), code
	}

	stdout, stderr, code := upload(true)
	if code != 0 || !strings.Contains(stderr, "big.html") || !strings.Contains(stderr, "100 %") {
		t.Fatalf("terminal: exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(stdout, "%") || !strings.Contains(stdout, "/api/reports/") {
		t.Fatalf("bars must not reach stdout: %q", stdout)
	}
	if _, stderr, code = upload(true, "--json"); code != 0 || stderr != "" {
		t.Fatalf("--json: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code = upload(false); code != 0 || stderr != "" {
		t.Fatalf("piped: exit %d, stderr %q", code, stderr)
	}
}
