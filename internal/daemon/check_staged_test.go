package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckAfterCrashListsStagedApart kills the real reportd binary while
// an upload is half received (its staged file in tmp/), then expects
// `reportd check` to list that file as staged, not as an orphan, and to
// exit 0; the next start removes it.
func TestCheckAfterCrashListsStagedApart(t *testing.T) {
	dir := t.TempDir()
	d := startReportd(t, dir)
	p := createProject(t, d.URL(), "crash")

	// Half an upload: headers and the first part of the file, then silence.
	conn, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctype, body := multipartUpload(p.ID, "md", "half.md", markdown("half", 256<<10))
	half := body.Bytes()[:body.Len()/2]
	fmt.Fprintf(conn, "POST /api/reports HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", d.Addr, ctype, body.Len())
	if _, err := conn.Write(half); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	deadline := time.Now().Add(waitLong)
	for {
		if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no staged file appeared in %s\n%s", tmp, d.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopWith(t, d, syscall.SIGKILL)

	c := testConfig(t, dir)
	rep, err := Check(context.Background(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Staged) != 1 || !strings.HasPrefix(rep.Staged[0], "tmp/upload-") {
		t.Errorf("staged: %v, want the one half upload in tmp/", rep.Staged)
	}
	if len(rep.Orphans) != 0 || !rep.Clean(false) {
		t.Errorf("a crash's staged file made the store unclean: %+v", rep)
	}
	out := runCLI(t, 0, "check", "--data-dir", dir)
	if !strings.Contains(out, "staged: tmp/upload-") || !strings.Contains(out, "the next start removes it") || strings.Contains(out, "orphan:") {
		t.Errorf("check output:\n%s", out)
	}
	if out := runCLI(t, 0, "check", "--json", "--data-dir", dir); !strings.Contains(out, `"staged": [`) {
		t.Errorf("check --json lacks staged:\n%s", out)
	}

	// The next start clears tmp/.
	_, stop := startServer(t, c)
	stop()
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Errorf("tmp/ after a start: %v %v", entries, err)
	}
	rep, err = Check(context.Background(), c, false)
	if err != nil || len(rep.Staged) != 0 || !rep.Clean(false) {
		t.Errorf("after a start: %+v %v", rep, err)
	}
}
