package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// vmHWM is a process's peak resident set size in bytes.
func vmHWM(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// A text of control bytes grows six-fold in JSON (\u0001 per byte). Below
// max_inline_content the detail streams it, so the daemon's peak RSS grows
// by far less than the escaped body; above it the detail leaves it out.
func TestReportDetailLargeTextMemory(t *testing.T) {
	const limit = 8 << 20
	p := startReportd(t, t.TempDir(), fmt.Sprintf("REPORTD_MAX_INLINE_CONTENT=%d", limit))
	proj := createProject(t, at(p, ""), "big")
	post := func(name string, n int) apiReport {
		t.Helper()
		status, r, e, err := upload(httpClient, at(p, ""), proj.ID, "md", name, bytes.Repeat([]byte{1}, n))
		if err != nil || status != http.StatusCreated {
			t.Fatalf("upload %s: %d %v %v", name, status, e, err)
		}
		return r
	}
	const inline = 6 << 20
	small, big := post("inline.md", inline), post("omitted.md", limit+1)

	before := vmHWM(t, p.Cmd.Process.Pid)
	resp, err := httpClient.Get(at(p, fmt.Sprintf("/api/reports/%d", small.ID)))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET detail: %v %s", err, resp.Status)
	}
	after := vmHWM(t, p.Cmd.Process.Pid)
	var got struct {
		FileContent *string `json:"fileContent"`
		Omitted     *bool   `json:"fileContentOmitted"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.FileContent == nil || *got.FileContent != strings.Repeat("\x01", inline) || got.Omitted != nil {
		t.Fatalf("the %d-byte text did not come back whole (omitted %v)", inline, got.Omitted)
	}
	if len(body) < 6*inline {
		t.Fatalf("body of %d bytes: not the escaped text", len(body))
	}
	// Building the body in memory costs at least the escaped 36 MiB (plus
	// the text and buffer doublings); streaming costs a few buffers.
	if grew, ceiling := after-before, int64(inline); grew > ceiling {
		t.Fatalf("peak RSS grew by %d MiB serving a %d MiB text (ceiling %d MiB; the body is %d MiB)",
			grew>>20, inline>>20, ceiling>>20, len(body)>>20)
	}
	t.Logf("peak RSS %d MiB before, %d MiB after serving a %d MiB body", before>>20, after>>20, len(body)>>20)

	var omitted map[string]any
	getJSON(t, at(p, fmt.Sprintf("/api/reports/%d", big.ID)), &omitted)
	if omitted["fileContent"] != nil || omitted["fileContentOmitted"] != true || omitted["fileContentSize"] != float64(limit+1) {
		t.Fatalf("over the limit: %v", omitted)
	}
	// The list has the spec's shape: no omitted fields there.
	var list []map[string]any
	getJSON(t, at(p, "/api/reports"), &list)
	for _, r := range list {
		if _, ok := r["fileContentOmitted"]; ok || r["fileContent"] != nil {
			t.Fatalf("list item %v", r)
		}
	}
}
