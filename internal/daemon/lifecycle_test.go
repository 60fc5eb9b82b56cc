package daemon

import (
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// notifySocket listens where the daemon will send sd_notify datagrams.
func notifySocket(t *testing.T) (string, <-chan string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	msgs := make(chan string, 1024)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(msgs)
				return
			}
			for _, line := range strings.Split(strings.TrimSpace(string(buf[:n])), "\n") {
				select {
				case msgs <- line:
				default:
				}
			}
		}
	}()
	return path, msgs
}

func expectMsg(t *testing.T, msgs <-chan string, want string) {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("notify socket closed before %q", want)
			}
			if m == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %q from the daemon", want)
		}
	}
}

// TestNotify runs the real binary with NOTIFY_SOCKET and WATCHDOG_USEC, as
// systemd would for Type=notify with WatchdogSec=, and reads what it sends.
func TestNotify(t *testing.T) {
	sock, msgs := notifySocket(t)
	p := startReportd(t, t.TempDir(), "NOTIFY_SOCKET="+sock, "WATCHDOG_USEC=200000")
	expectMsg(t, msgs, "READY=1")
	// READY=1 comes after the listener is bound: the API answers now.
	getBody(t, at(p, "/api/reports/ping"))
	expectMsg(t, msgs, "WATCHDOG=1")
	expectMsg(t, msgs, "WATCHDOG=1")
	if err := stopWith(t, p, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.Log())
	}
	expectMsg(t, msgs, "STOPPING=1")
}

// TestSIGTERMFinishesUpload starts an upload, sends SIGTERM while the body
// is still streaming, and expects: new connections refused, the upload
// answered 201, a clean exit, and the report intact after a restart.
func TestSIGTERMFinishesUpload(t *testing.T) {
	dir := t.TempDir()
	p := startReportd(t, dir)
	proj := createProject(t, at(p, ""), "shutdown")

	content := markdown("in flight", 3<<20)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	req, _ := http.NewRequest("POST", at(p, "/api/reports"), pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	type result struct {
		status int
		body   string
		err    error
	}
	resc := make(chan result, 1)
	go func() {
		resp, err := httpClient.Do(req)
		if err != nil {
			resc <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resc <- result{status: resp.StatusCode, body: string(b)}
	}()
	mw.WriteField("projectId", fmt.Sprint(proj.ID))
	mw.WriteField("fileType", "md")
	fw, _ := mw.CreateFormFile("file", "inflight.md")
	half := len(content) / 2
	if _, err := fw.Write(content[:half]); err != nil {
		t.Fatal(err)
	}
	// The handler is staging once its temp file has bytes in it.
	waitFor(t, "the upload to reach the handler", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "tmp", "upload-*"))
		for _, f := range m {
			if fi, err := os.Stat(f); err == nil && fi.Size() > 0 {
				return true
			}
		}
		return false
	})
	p.Signal(syscall.SIGTERM)
	waitFor(t, "the listener to close", func() bool {
		c, err := net.DialTimeout("tcp", p.Addr, time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	if _, err := fw.Write(content[half:]); err != nil {
		t.Fatal(err)
	}
	mw.Close()
	pw.Close()
	res := <-resc
	if res.err != nil || res.status != http.StatusCreated {
		t.Fatalf("in-flight upload: status %d, err %v, body %s\n%s", res.status, res.err, res.body, p.Log())
	}
	select {
	case <-p.Done():
	case <-time.After(waitLong):
		t.Fatal("daemon did not exit after the upload finished")
	}
	if p.Err() != nil {
		t.Fatalf("exit: %v\n%s", p.Err(), p.Log())
	}

	p2 := startReportd(t, dir)
	var reps []apiReport
	getJSON(t, at(p2, fmt.Sprintf("/api/reports?projectId=%d", proj.ID)), &reps)
	if len(reps) != 1 {
		t.Fatalf("after restart: %d reports, want 1", len(reps))
	}
	if got := getBody(t, at(p2, fmt.Sprintf("/api/reports/%d/download", reps[0].ID))); sum(got) != sum(content) {
		t.Fatalf("in-flight upload read back %d bytes with another checksum", len(got))
	}
}

// TestSocketActivation passes a listening socket as fd 3 with LISTEN_FDS=1
// and LISTEN_PID of the daemon, as systemd does for reportd.socket.
func TestSocketActivation(t *testing.T) {
	p, addrs := startSocketActivated(t, 1)
	addr := addrs[0]
	if p.Addr != addr {
		t.Fatalf("daemon serves on %s, want the passed socket %s", p.Addr, addr)
	}
	getBody(t, "http://"+addr+"/api/reports/ping")
	if err := stopWith(t, p, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// TestSlowHeadersCutOff: a client that never finishes its headers is
// disconnected after read_header_timeout.
func TestSlowHeadersCutOff(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.HeaderTimeout = 300 * time.Millisecond
	s, _ := startServer(t, c)
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /api/reports/ping HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(waitLong))
	b, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server kept a slow-header connection open")
	}
	if len(b) > 0 && !strings.Contains(string(b), "408") {
		t.Fatalf("slow-header client got %q", b)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
