package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func uploadFixture(t *testing.T, base string, project int64, typ, name string, content []byte) int64 {
	t.Helper()
	st, rep, e, err := upload(httpClient, base, project, typ, name, content)
	if st != http.StatusCreated {
		t.Fatalf("upload %s: %d %v %v", name, st, e, err)
	}
	return rep.ID
}

// engineProcs lists the processes whose command line names the daemon's
// engine work directory (/tmp/reportd-convert-PID-N/...) or that descend
// from the daemon: Chromium, soffice, the office helper and their bwraps.
func engineProcs(daemon int) map[int]string {
	marker := fmt.Sprintf("reportd-convert-%d-", daemon)
	parents := map[int]int{}
	cmds := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		cmds[pid] = strings.ReplaceAll(string(b), "\x00", " ")
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(st), ')'); i > 0 {
				if f := strings.Fields(string(st)[i+1:]); len(f) > 1 && f[0] != "Z" {
					parents[pid], _ = strconv.Atoi(f[1])
				} else {
					delete(cmds, pid) // a zombie is gone already
				}
			}
		}
	}
	out := map[int]string{}
	for pid, cmd := range cmds {
		under := false
		for p := parents[pid]; p > 1; p = parents[p] {
			if p == daemon {
				under = true
				break
			}
		}
		if under || strings.Contains(cmd, marker) {
			out[pid] = cmd
		}
	}
	return out
}

func hasProc(procs map[int]string, name string) bool {
	for _, cmd := range procs {
		if strings.Contains(cmd, name) {
			return true
		}
	}
	return false
}

// TestSIGKILLLeavesNoEngine: when reportd dies by SIGKILL in the middle of
// HTML and PPTX conversions, every engine process dies with it.
func TestSIGKILLLeavesNoEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and LibreOffice")
	}
	deck, err := os.ReadFile(filepath.Join("..", "convert", "testdata", "deck.pptx"))
	if err != nil {
		t.Fatal(err)
	}
	d := startReportd(t, t.TempDir(), "REPORTD_CONVERT_WARM_ON_START=true")
	pid := d.Cmd.Process.Pid
	proj := createProject(t, d.URL(), "kill")
	// The script holds the HTML conversion busy for a while.
	html := uploadFixture(t, d.URL(), proj.ID, "html", "busy.html", []byte(`<p>busy</p><script>
const end = Date.now() + 20000; while (Date.now() < end) {}</script>`))
	pptx := uploadFixture(t, d.URL(), proj.ID, "pptx", "deck.pptx", deck)
	for _, id := range []int64{html, pptx} {
		go func() {
			if resp, err := httpClient.Get(fmt.Sprintf("%s/api/reports/%d/pdf", d.URL(), id)); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	var before map[int]string
	deadline := time.Now().Add(3 * time.Minute) // a guard against hangs, not an assertion
	for {
		before = engineProcs(pid)
		if hasProc(before, "soffice.bin") && hasProc(before, "chrom") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("engines never ran; processes: %v\n%s", before, d.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !hasProc(before, "bwrap") {
		t.Errorf("engines run without bwrap: %v", before)
	}
	d.Kill()
	var left map[int]string
	for deadline := time.Now().Add(time.Minute); ; {
		left = engineProcs(pid)
		for p := range before {
			if _, ok := left[p]; !ok && alive(p) {
				left[p] = "(pid of an engine process)"
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("engine processes outlived the SIGKILLed daemon: %v", left)
	for p := range left {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// TestEnginesRefuseWithoutSandbox: with no usable bwrap, conversion answers
// a ConversionError naming the reason, unless convert.unsandboxed is set.
func TestEnginesRefuseWithoutSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	for _, unsandboxed := range []bool{false, true} {
		t.Run(fmt.Sprint("unsandboxed=", unsandboxed), func(t *testing.T) {
			d := startReportd(t, t.TempDir(), "REPORTD_CONVERT_WARM_ON_START=true",
				"REPORTD_CONVERT_BWRAP_PATH=/nonexistent/bwrap", fmt.Sprint("REPORTD_CONVERT_UNSANDBOXED=", unsandboxed))
			proj := createProject(t, d.URL(), "nosandbox")
			id := uploadFixture(t, d.URL(), proj.ID, "html", "a.html", []byte("<p>hello</p>"))
			resp, err := httpClient.Get(fmt.Sprintf("%s/api/reports/%d/pdf", d.URL(), id))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if unsandboxed {
				if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "%PDF-") {
					t.Fatalf("unsandboxed allowed: %s %.200q", resp.Status, body)
				}
				if !strings.Contains(d.Log(), "UNSANDBOXED") {
					t.Errorf("the daemon did not log that engines run unsandboxed:\n%s", d.Log())
				}
				return
			}
			var e apiError
			if err := json.Unmarshal(body, &e); err != nil || e.Type != "ConversionError" {
				t.Fatalf("want a ConversionError body, got %s %q", resp.Status, body)
			}
			for _, want := range []string{"sandbox", "/nonexistent/bwrap", "convert.unsandboxed"} {
				if !strings.Contains(e.Error, want) {
					t.Errorf("error %q lacks %q", e.Error, want)
				}
			}
		})
	}
}
