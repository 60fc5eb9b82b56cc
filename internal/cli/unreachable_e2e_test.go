package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/testserver"
)

// reportctl speaks for itself: a server or a forge it cannot reach is one
// clear message of its own on stderr, never also resty's log lines
// ("ERROR RESTY ...", "WARN RESTY ..., Attempt 2", which the forge's
// retried requests printed).
func TestUnreachableIsOneClearMessage(t *testing.T) {
	e := startCLIEnv(t)
	port, err := testserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", port) // nothing listens there

	// The server, with no retries: one line, the error.
	cmd := exec.Command(filepath.Join(e.bin, "reportctl"), "ping")
	cmd.Dir = e.dir
	home := filepath.Join(e.dir, ".home")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"REPORTCTL_SERVER=http://" + closed, "REPORTCTL_RETRIES=0"}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err == nil {
		t.Fatal("ping of a closed port succeeded")
	}
	lines := nonEmptyLines(errb.String())
	if len(lines) != 1 || strings.Contains(errb.String(), "RESTY") || !strings.Contains(lines[0], closed) {
		t.Errorf("stderr of ping of a closed port, want one line naming %s:\n%s", closed, errb.String())
	}

	// The forge, retried: the upload succeeds, and the comment's failure
	// is one line, a warning.
	e.write("r.html", []byte("<h1>unreachable forge</h1>"))
	env := githubEnv("http://"+closed, filepath.Join(e.dir, "summary.md"))
	_, stderr := e.runCI(env, 0, "upload", "r.html", "--project-name", "web", "--create-project", "--comment")
	if lines := nonEmptyLines(stderr); len(lines) != 1 || strings.Contains(stderr, "RESTY") || !strings.Contains(lines[0], closed) {
		t.Errorf("stderr of an upload whose forge is unreachable, want one line naming %s:\n%s", closed, stderr)
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
