package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/netguard"
)

// Slow readers, hostile or unlucky (issue 21), against the daemon's two
// listeners at a small max_connections. Distinct clients dial from
// distinct loopback addresses (127.0.0.x).

// guardedDaemon runs an in-process daemon with edit applied to its
// config, and uploads a large Markdown report (for the API's download)
// and a large HTML report (served by the content origin). It returns the
// server and both reports' raw requests.
type guardedDaemon struct {
	s                    *Server
	project              int64
	size, pageSize       int
	apiPath              string // GET on the API listener
	contentHost, sitPath string // Host and path on the content origin
}

func startGuarded(t *testing.T, edit func(*config.Config)) *guardedDaemon {
	t.Helper()
	c := testConfig(t, t.TempDir())
	c.ErrorStatus = "conventional"
	edit(&c)
	s, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true}})
	base := "http://" + s.Addr()
	d := &guardedDaemon{s: s, project: createProject(t, base, "slow readers").ID, size: 24 << 20}
	code, md, e, err := upload(httpClient, base, d.project, "md", "big.md", markdown("slow", d.size))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("upload md: %d %+v %v", code, e, err)
	}
	d.apiPath = fmt.Sprintf("/api/reports/%d/download", md.ID)
	page := []byte("<!DOCTYPE html><title>big</title>\n" + strings.Repeat("<p>a large report page</p>\n", d.size/28))
	ct, body := multipartUpload(d.project, "html", "big.html", page)
	res, err := httpClient.Post(base+"/api/reports", ct, body)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		SiteURL string `json:"siteUrl"`
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || json.Unmarshal(b, &rep) != nil || rep.SiteURL == "" {
		t.Fatalf("upload html: %s %s", res.Status, b)
	}
	u, err := url.Parse(rep.SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	d.contentHost, d.sitPath, d.pageSize = u.Host, u.RequestURI(), len(page)
	return d
}

// dialFrom connects to addr from the loopback address ip with a small
// receive buffer, as a client on a slow link that stops reading.
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: waitLong,
		Control: func(_, _ string, rc syscall.RawConn) error {
			rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			return nil
		}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startGet sends a GET and reads nothing.
func startGet(t *testing.T, c net.Conn, host, path string) {
	t.Helper()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host); err != nil {
		t.Fatal(err)
	}
}

// clientFrom is an HTTP client dialing from ip, one connection per request.
func clientFrom(ip string) *http.Client {
	return &http.Client{Timeout: waitLong, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}}
}

// getFrom GETs path on addr with Host host from ip: status and body.
func getFrom(t *testing.T, ip, addr, host, path string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Host = host
	res, err := clientFrom(ip).Do(req)
	if err != nil {
		t.Fatalf("GET %s%s from %s: %v", host, path, ip, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so after %v", what, waitLong)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A client that asks for a large file and never reads it is cut once
// download_rate_grace has passed, on the API and on the content origin;
// the connection ends before the file did.
func TestDaemonCutsSlowReaders(t *testing.T) {
	const grace = time.Second
	d := startGuarded(t, func(c *config.Config) {
		c.DownloadMinRate, c.DownloadRateGrace, c.DownloadIdleTimeout = 1<<20, grace, 0
	})
	for i, l := range []struct {
		name, addr, host, path string
		g                      *netguard.Guard
		size                   int
	}{
		{"api", d.s.Addr(), "localhost", d.apiPath, d.s.apiGuard, d.size},
		{"content", d.s.ContentAddr(), d.contentHost, d.sitPath, d.s.contentGuard, d.pageSize},
	} {
		c := dialFrom(t, fmt.Sprintf("127.0.0.%d", 2+i), l.addr)
		start := time.Now()
		startGet(t, c, l.host, l.path)
		waitUntil(t, l.name+": slow reader cut", func() bool { return l.g.Stats().Cut >= 1 })
		if took := time.Since(start); took < grace {
			t.Fatalf("%s: cut after %v, within the grace period %v", l.name, took, grace)
		}
		c.SetReadDeadline(time.Now().Add(waitLong))
		n, err := io.Copy(io.Discard, c)
		if errors.Is(err, os.ErrDeadlineExceeded) || n >= int64(l.size) {
			t.Fatalf("%s: after the cut the client read %d of %d bytes (%v)", l.name, n, l.size, err)
		}
		// A client that reads gets the whole file.
		res, b := getFrom(t, "127.0.0.9", l.addr, l.host, l.path)
		if res.StatusCode != 200 || len(b) != l.size {
			t.Fatalf("%s: a reading client: %s, %d bytes", l.name, res.Status, len(b))
		}
	}
}

// Past max_connections, with every place held by a reader that does not
// read (and is never cut: no minimum rate here), ping and pages keep
// answering: a new client displaces a stalled reader instead of waiting
// in the kernel's queue.
func TestDaemonPastTheCapPingAnswers(t *testing.T) {
	d := startGuarded(t, func(c *config.Config) {
		c.MaxConnections, c.DownloadMinRate, c.DownloadIdleTimeout, c.WriteTimeout = 4, 0, 0, 0
	})
	for _, l := range []struct {
		name, addr, host, path string
		g                      *netguard.Guard
	}{
		{"api", d.s.Addr(), "localhost", d.apiPath, d.s.apiGuard},
		{"content", d.s.ContentAddr(), d.contentHost, d.sitPath, d.s.contentGuard},
	} {
		for i := range 4 {
			startGet(t, dialFrom(t, fmt.Sprintf("127.0.0.%d", 2+i), l.addr), l.host, l.path)
		}
		waitUntil(t, l.name+": the readers hold every place", func() bool { return l.g.Stats().Open == 4 })
		for i := range 10 {
			ip := fmt.Sprintf("127.0.0.%d", 20+i)
			start := time.Now()
			ping := func() int {
				if l.name == "api" {
					res, _ := getFrom(t, ip, l.addr, "localhost", "/api/reports/ping")
					return res.StatusCode
				}
				res, _ := getFrom(t, ip, l.addr, l.host, "/no-such-page")
				return res.StatusCode
			}
			want := map[string]int{"api": 200, "content": 404}[l.name]
			// Busy (a reader not stalled long enough yet) is an answer too;
			// the client retries as Retry-After says.
			waitUntil(t, l.name+": ping past the cap", func() bool { return ping() == want })
			t.Logf("%s: answered past the cap in %v", l.name, time.Since(start).Round(time.Millisecond))
		}
		if st := l.g.Stats(); st.Evicted < 1 || st.Open > 4 {
			t.Fatalf("%s: %+v: want stalled readers displaced, never more than 4 open", l.name, st)
		}
	}
}

// holdUpload starts an upload from ip (through a proxy naming xff, if
// set) and sends half its body: the daemon is busy reading it, a
// connection no newcomer may displace.
func holdUpload(t *testing.T, addr, ip, xff string, project int64) net.Conn {
	t.Helper()
	c := dialFrom(t, ip, addr)
	ct, body := multipartUpload(project, "md", "held.md", markdown("held", 1<<20))
	hdr := fmt.Sprintf("POST /api/reports HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\nContent-Length: %d\r\n", ct, body.Len())
	if xff != "" {
		hdr += "X-Forwarded-For: " + xff + "\r\n"
	}
	if _, err := io.WriteString(c, hdr+"\r\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(body.Bytes()[:body.Len()/2]); err != nil {
		t.Fatal(err)
	}
	return c
}

// busyAnswer checks a busy answer: status, the spec's error body naming
// what is full, Retry-After.
func busyAnswer(t *testing.T, res *http.Response, b []byte, status int, names string) {
	t.Helper()
	var e apiError
	if res.StatusCode != status || res.Header.Get("Retry-After") == "" || json.Unmarshal(b, &e) != nil ||
		e.Type != "ServiceUnavailableError" || !strings.HasPrefix(e.Error, "ServiceUnavailableError: ") || !strings.Contains(e.Error, names) {
		t.Fatalf("want %d ServiceUnavailableError naming %s with Retry-After, got %s (Retry-After %q) %s", status, names, res.Status, res.Header.Get("Retry-After"), b)
	}
}

// Past the cap with every place busy on the daemon's side (uploads
// arriving), a new client is answered ServiceUnavailableError with
// Retry-After at once, 503 in conventional mode and 500 in spec mode,
// and is served once a place is free.
func TestDaemonPastTheCapAnswersBusy(t *testing.T) {
	for _, mode := range []struct {
		name   string
		status int
	}{{"conventional", http.StatusServiceUnavailable}, {"spec", http.StatusInternalServerError}} {
		c := testConfig(t, t.TempDir())
		c.ErrorStatus, c.MaxConnections, c.UploadMinRate, c.UploadIdleTimeout = mode.name, 3, 0, 0
		s, stop := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true}})
		project := createProject(t, "http://"+s.Addr(), "held").ID
		httpClient.CloseIdleConnections()
		waitUntil(t, mode.name+": no connection open", func() bool { return s.apiGuard.Stats().Open == 0 })
		var held []net.Conn
		for i := range 3 {
			held = append(held, holdUpload(t, s.Addr(), fmt.Sprintf("127.0.0.%d", 2+i), "", project))
		}
		waitUntil(t, mode.name+": three uploads arriving", func() bool { return s.apiGuard.Stats().Active == 3 })
		res, b := getFrom(t, "127.0.0.9", s.Addr(), "localhost", "/api/reports/ping")
		busyAnswer(t, res, b, mode.status, "max_connections: 3")
		held[0].Close()
		waitUntil(t, mode.name+": served once a place is free", func() bool {
			res, _ := getFrom(t, "127.0.0.9", s.Addr(), "localhost", "/api/reports/ping")
			return res.StatusCode == 200
		})
		stop()
	}
}

// max_connections_per_client gives one address at most its share; behind
// a trusted proxy the address X-Forwarded-For names is counted, and a
// client cannot escape its share by writing the header itself.
func TestDaemonPerClientShare(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.ErrorStatus, c.MaxConnectionsPerClient, c.UploadMinRate, c.UploadIdleTimeout = "conventional", 2, 0, 0
	c.TrustedProxies = []string{"127.0.0.7"}
	s, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true}})
	project := createProject(t, "http://"+s.Addr(), "share").ID
	ping := func(ip, xff string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+s.Addr()+"/api/reports/ping", nil)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		res, err := clientFrom(ip).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	for range 2 {
		holdUpload(t, s.Addr(), "127.0.0.5", "", project)
	}
	waitUntil(t, "two held uploads", func() bool { return s.apiGuard.Stats().Open >= 2 })
	res, b := ping("127.0.0.5", "")
	busyAnswer(t, res, b, http.StatusServiceUnavailable, "max_connections_per_client: 2")
	if res, b := ping("127.0.0.6", ""); res.StatusCode != 200 {
		t.Fatalf("another address: %s %s", res.Status, b)
	}
	for range 2 {
		holdUpload(t, s.Addr(), "127.0.0.7", "203.0.113.9", project)
	}
	waitUntil(t, "two held uploads through the proxy", func() bool { return s.apiGuard.Stats().Active >= 4 })
	res, b = ping("127.0.0.7", "203.0.113.9")
	busyAnswer(t, res, b, http.StatusServiceUnavailable, "max_connections_per_client: 2")
	res, b = ping("127.0.0.7", "198.51.100.1, 203.0.113.9")
	busyAnswer(t, res, b, http.StatusServiceUnavailable, "203.0.113.9")
	if res, b := ping("127.0.0.7", "203.0.113.10"); res.StatusCode != 200 {
		t.Fatalf("another client through the proxy: %s %s", res.Status, b)
	}
	if res, b := ping("127.0.0.6", "203.0.113.9"); res.StatusCode != 200 {
		t.Fatalf("X-Forwarded-For from a peer that is no trusted proxy was believed: %s %s", res.Status, b)
	}
}
