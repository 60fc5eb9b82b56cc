package netguard

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// writes counts the writes that reach the socket.
type writes struct {
	net.Conn
	mu sync.Mutex
	n  int
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
	return w.Conn.Write(p)
}

func (w *writes) count() int { w.mu.Lock(); defer w.mu.Unlock(); return w.n }

func total(l *keepListener[*writes]) (n int) {
	for _, c := range l.all() {
		n += c.count()
	}
	return n
}

// TestGather: an answer whose handler asks for Gather reaches the socket
// in one write (net/http alone makes two of a header and a 12 KiB body),
// whole, GET and HEAD, on a keep-alive connection and on one that closes
// after the answer; an answer larger than gatherMax arrives whole too;
// without Gather nothing changes.
func TestGather(t *testing.T) {
	small := bytes.Repeat([]byte("s"), 12<<10)
	large := bytes.Repeat([]byte("L"), 3*gatherMax)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wl := &keepListener[*writes]{Listener: ln, wrap: func(c net.Conn) *writes { return &writes{Conn: c} }}
	g := New(Options{MinRate: 32 << 10, Grace: 10 * time.Second, Idle: 30 * time.Second})
	srv := &http.Server{ReadHeaderTimeout: waitLong, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := small
		if r.URL.Path == "/large" {
			body = large
		}
		if r.URL.Query().Get("gather") != "" {
			Gather(r)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("X-Answer", r.URL.Path)
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	})}
	c, br := serveOne(t, g, srv, wl)
	ask := func(method, path string, want []byte, hdr ...string) {
		t.Helper()
		req := method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n"
		for _, h := range hdr {
			req += h + "\r\n"
		}
		if _, err := io.WriteString(c, req+"\r\n"); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if method == http.MethodHead {
			want = nil
		}
		if err != nil || res.StatusCode != http.StatusOK || !bytes.Equal(b, want) || res.Header.Get("X-Answer") == "" {
			t.Fatalf("%s %s: %d, %d bytes (want %d), %v", method, path, res.StatusCode, len(b), len(want), err)
		}
	}
	const n = 20
	before := total(wl)
	for range n {
		ask(http.MethodGet, "/small?gather=1", small)
	}
	if w := total(wl) - before; w != n {
		t.Errorf("%d gathered answers took %d writes, want one each", n, w)
	}
	before = total(wl)
	for range n {
		ask(http.MethodGet, "/small", small)
	}
	if w := total(wl) - before; w != 2*n {
		t.Errorf("%d answers without Gather took %d writes, want two each (net/http's 4 KiB buffer, then the rest)", n, w)
	}
	before = total(wl)
	ask(http.MethodHead, "/small?gather=1", small)
	if w := total(wl) - before; w != 1 {
		t.Errorf("a gathered HEAD answer took %d writes, want one", w)
	}
	ask(http.MethodGet, "/large?gather=1", large)
	ask(http.MethodGet, "/small?gather=1", small)
	// The last answer on a connection the client closes.
	ask(http.MethodGet, "/small?gather=1", small, "Connection: close")
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after Connection: close: %v, want EOF", err)
	}
	if st := g.Stats(); st.Cut != 0 {
		t.Errorf("stats %+v", st)
	}
}
