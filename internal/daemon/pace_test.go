package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The upload pacing keys reach the real daemon: an upload that stalls
// halfway is cut off with the API's error body while the client is still
// connected, and nothing is stored.
func TestDaemonCutsOffStalledUpload(t *testing.T) {
	p := startReportd(t, t.TempDir(), "REPORTD_UPLOAD_IDLE_TIMEOUT=300ms", "REPORTD_ERROR_STATUS=conventional")
	proj := createProject(t, at(p, ""), "slow")
	ctype, body := multipartUpload(proj.ID, "md", "slow.md", bytes.Repeat([]byte("# stalled\n"), 10<<10))
	conn, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/reports HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ctype, body.Len())
	if _, err := conn.Write(body.Bytes()[:body.Len()/2]); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(waitLong)) // a hang fails, it never passes
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled upload: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	var e apiError
	if json.Unmarshal(b, &e) != nil || resp.StatusCode != http.StatusRequestTimeout || e.Type != "ValidationError" || !strings.Contains(e.Error, "too slowly") {
		t.Fatalf("%s %s", resp.Status, b)
	}
	var list []apiReport
	getJSON(t, at(p, "/api/reports"), &list)
	if len(list) != 0 {
		t.Fatalf("stored after a cut-off upload: %+v", list)
	}
}
