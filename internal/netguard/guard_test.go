package netguard

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitLong bounds every wait that is not what a test is about: generous,
// because the tests run on busy machines.
const waitLong = 60 * time.Second

// serve runs h on a loopback listener behind a guard of o.
func serve(t *testing.T, o Options, h http.Handler) (*Guard, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := New(o)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: waitLong}
	g.Wire(srv)
	go srv.Serve(g.Listener(ln))
	t.Cleanup(func() { srv.Close() })
	return g, ln.Addr().String()
}

// dialFrom connects from the loopback address ip (127.0.0.x) with a small
// receive buffer, so a client that does not read stalls the server soon.
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

// getRaw sends a GET of path on c.
func getRaw(t *testing.T, c net.Conn, path string, hdr ...string) {
	t.Helper()
	req := "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n"
	for _, h := range hdr {
		req += h + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
}

// readUntilCut waits, without reading, until g has cut one more response
// than cutsBefore, then reads what reached the client: it returns how
// many bytes and whether the connection ended before want bytes.
func readUntilCut(t *testing.T, g *Guard, cutsBefore int64, c net.Conn, want int) (int, bool) {
	t.Helper()
	waitFor(t, func() bool { return g.Stats().Cut > cutsBefore })
	c.SetReadDeadline(time.Now().Add(waitLong))
	n, err := io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection of a cut response stayed open (%d bytes read)", n)
	}
	return int(n), int(n) < want
}

// A client that asks for a large body and does not read it is cut once
// the grace period has passed, both for a body written from memory and
// for a file (sendfile path); a client that reads gets every byte.
func TestSlowReaderIsCutAfterGrace(t *testing.T) {
	big := make([]byte, 64<<20)
	rand.Read(big)
	path := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mem", func(w http.ResponseWriter, r *http.Request) {
		FileBody(r.Context())
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		w.Write(big)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		FileBody(r.Context())
		http.ServeFile(w, r, path)
	})
	const grace = time.Second
	g, addr := serve(t, Options{MinRate: 1 << 20, Grace: grace, Listener: "test"}, mux)
	for i, p := range []string{"/mem", "/file"} {
		c := dialFrom(t, fmt.Sprintf("127.0.0.%d", 2+i), addr)
		start := time.Now()
		getRaw(t, c, p)
		n, cut := readUntilCut(t, g, int64(i), c, len(big))
		if !cut {
			t.Fatalf("%s: read all %d bytes: not cut", p, n)
		}
		if took := time.Since(start); took < grace {
			t.Fatalf("%s: cut after %v, before the grace period %v", p, took, grace)
		}
	}
	if st := g.Stats(); st.Cut < 2 {
		t.Fatalf("stats %+v: want 2 cuts", st)
	}
	// A reader at full speed gets every byte, a range too.
	for _, p := range []string{"/mem", "/file"} {
		res, err := (&http.Client{Timeout: waitLong}).Get("http://" + addr + p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || !bytes.Equal(b, big) {
			t.Fatalf("%s: %v, %d bytes, equal %v", p, err, len(b), bytes.Equal(b, big))
		}
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/file", nil)
	req.Header.Set("Range", "bytes=1000000-9999999")
	res, err := (&http.Client{Timeout: waitLong}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusPartialContent || !bytes.Equal(b, big[1000000:10000000]) {
		t.Fatalf("range: %s, %d bytes", res.Status, len(b))
	}
}

// write_timeout caps a response that is not a file body, counted from its
// first byte (not from the request: a slow handler is not cut), and
// leaves a file body to the rate.
func TestWriteTimeoutCapsAnswersNotFiles(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 32<<20)
	mux := http.NewServeMux()
	handler := func(file bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if file {
				FileBody(r.Context())
			}
			time.Sleep(1500 * time.Millisecond) // longer than the cap: not counted
			w.Write(big)
		}
	}
	mux.Handle("/answer", handler(false))
	mux.Handle("/file", handler(true))
	const cap = time.Second
	g, addr := serve(t, Options{WriteTimeout: cap}, mux)
	c := dialFrom(t, "127.0.0.2", addr)
	getRaw(t, c, "/answer")
	if _, cut := readUntilCut(t, g, 0, c, len(big)); !cut {
		t.Fatal("an answer read far below any rate was not cut by write_timeout")
	}
	if g.Stats().Cut != 1 {
		t.Fatalf("stats %+v", g.Stats())
	}
	// The file body, read slowly for longer than the cap, is not cut.
	c = dialFrom(t, "127.0.0.3", addr)
	getRaw(t, c, "/file")
	time.Sleep(3 * cap)
	c.SetReadDeadline(time.Now().Add(waitLong))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil || n != int64(len(big)) {
		t.Fatalf("file body: %d bytes, %v", n, err)
	}
}

// At the cap a new connection displaces the one stalled longest; when
// none is stalled it is answered busy at once, in the spec's error body.
func TestCapDisplacesStalledElseAnswersBusy(t *testing.T) {
	big := bytes.Repeat([]byte("y"), 32<<20)
	hold := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(big) })
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		select { // the server's own work, until its client goes
		case <-hold:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/ping", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pong") })
	g, addr := serve(t, Options{MaxConns: 2, StallAfter: 500 * time.Millisecond, Status: http.StatusServiceUnavailable}, mux)
	defer close(hold)
	var readers []net.Conn
	for i := range 2 {
		c := dialFrom(t, fmt.Sprintf("127.0.0.%d", 2+i), addr)
		getRaw(t, c, "/big")
		readers = append(readers, c)
	}
	ping := func(ip string) *http.Response {
		t.Helper()
		cl := &http.Client{Timeout: waitLong, Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}}
		res, err := cl.Get("http://" + addr + "/ping")
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	time.Sleep(time.Second) // both readers stalled
	for i := range 3 {
		if res := ping(fmt.Sprintf("127.0.0.%d", 10+i)); res.StatusCode != 200 {
			t.Fatalf("ping past the cap with stalled readers: %s", res.Status)
		}
	}
	if st := g.Stats(); st.Evicted < 1 {
		t.Fatalf("stats %+v: want a stalled reader displaced", st)
	}
	for _, c := range readers {
		c.Close()
	}
	waitFor(t, func() bool { return g.Stats().Open == 0 })
	// Two connections busy on the server's side are never displaced.
	var busy []net.Conn
	for i := range 2 {
		c := dialFrom(t, fmt.Sprintf("127.0.0.%d", 20+i), addr)
		getRaw(t, c, "/busy")
		busy = append(busy, c)
	}
	time.Sleep(time.Second)
	res := ping("127.0.0.30")
	b, _ := io.ReadAll(res.Body)
	var e struct{ Error, Type string }
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || json.Unmarshal(b, &e) != nil ||
		e.Type != "ServiceUnavailableError" || !strings.HasPrefix(e.Error, "ServiceUnavailableError: ") || !strings.Contains(e.Error, "max_connections: 2") {
		t.Fatalf("past the cap with busy connections: %s %q %s", res.Status, res.Header.Get("Retry-After"), b)
	}
	busy[0].Close()
	waitFor(t, func() bool { return ping("127.0.0.31").StatusCode == 200 })
}

// waitFor polls ok until it holds, for at most waitLong.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after %v", waitLong)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The per-client share counts connections by peer address, and behind a
// trusted proxy requests in flight by the address X-Forwarded-For names.
func TestPerClientShare(t *testing.T) {
	hold := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		select { // the server's own work, until its client goes
		case <-hold:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/ping", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pong") })
	proxy := netip.MustParsePrefix("127.0.0.7/32")
	_, addr := serve(t, Options{PerClient: 2, TrustedProxies: []netip.Prefix{proxy}, Status: http.StatusServiceUnavailable}, mux)
	defer close(hold)
	status := func(ip string, hdr ...string) int {
		t.Helper()
		c := dialFrom(t, ip, addr)
		getRaw(t, c, "/ping", append(hdr, "Connection: close")...)
		c.SetReadDeadline(time.Now().Add(waitLong))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for range 2 {
		getRaw(t, dialFrom(t, "127.0.0.5", addr), "/busy")
	}
	time.Sleep(200 * time.Millisecond)
	if s := status("127.0.0.5"); s != http.StatusServiceUnavailable {
		t.Fatalf("third connection of one address: %d", s)
	}
	if s := status("127.0.0.6"); s != 200 {
		t.Fatalf("another address: %d", s)
	}
	// Through the proxy: its connections are not counted, the forwarded
	// client's requests are.
	for range 2 {
		getRaw(t, dialFrom(t, "127.0.0.7", addr), "/busy", "X-Forwarded-For: 203.0.113.9")
	}
	time.Sleep(200 * time.Millisecond)
	if s := status("127.0.0.7", "X-Forwarded-For: 203.0.113.9"); s != http.StatusServiceUnavailable {
		t.Fatalf("third request of one forwarded client: %d", s)
	}
	// A client cannot escape by writing its own X-Forwarded-For: the
	// rightmost untrusted hop is the one the proxy saw.
	if s := status("127.0.0.7", "X-Forwarded-For: 198.51.100.1, 203.0.113.9"); s != http.StatusServiceUnavailable {
		t.Fatalf("forged hop in front: %d", s)
	}
	if s := status("127.0.0.7", "X-Forwarded-For: 203.0.113.10"); s != 200 {
		t.Fatalf("another forwarded client: %d", s)
	}
	// A peer that is not a trusted proxy is not believed.
	if s := status("127.0.0.6", "X-Forwarded-For: 203.0.113.9"); s != 200 {
		t.Fatalf("untrusted X-Forwarded-For: %d", s)
	}
}

func TestForwardedClient(t *testing.T) {
	g := New(Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	peer := netip.MustParseAddr("10.0.0.1")
	for _, tc := range []struct{ xff, want string }{
		{"", "10.0.0.1"},
		{"203.0.113.5", "203.0.113.5"},
		{"203.0.113.5, 10.1.2.3", "203.0.113.5"},
		{"198.51.100.1, 203.0.113.5, 10.1.2.3", "203.0.113.5"},
		{"junk, 203.0.113.5", "203.0.113.5"},
		{"203.0.113.5, junk", "10.0.0.1"},
		{"[2001:db8::1]:4711", "2001:db8::1"},
		{"::ffff:203.0.113.7", "203.0.113.7"},
	} {
		r, _ := http.NewRequestWithContext(context.Background(), "GET", "/", nil)
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := g.forwardedClient(r, peer); got.String() != tc.want {
			t.Errorf("X-Forwarded-For %q: %s, want %s", tc.xff, got, tc.want)
		}
	}
}

// The minimum rate counts only the time writes waited on the client: a
// handler that produces its bytes slowly (a backup, a site's zip) is
// not cut while its client reads everything at once.
func TestSlowProducerIsNotCut(t *testing.T) {
	chunk := bytes.Repeat([]byte("z"), 4<<10)
	const n = 40
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		FileBody(r.Context())
		for range n {
			w.Write(chunk)
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	})
	g, addr := serve(t, Options{MinRate: 1 << 20, Grace: 200 * time.Millisecond, Idle: waitLong}, mux)
	res, err := (&http.Client{Timeout: waitLong}).Get("http://" + addr + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || len(b) != n*len(chunk) || g.Stats().Cut != 0 {
		t.Fatalf("a slowly produced body: %d of %d bytes, %v, stats %+v", len(b), n*len(chunk), err, g.Stats())
	}
}
