package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/reportd/reportd/internal/testserver"
)

// shippedNginxConf is the front configuration operators are given, read
// from the repository (bench/run.sh runs from its root).
const shippedNginxConf = "examples/content-origin/nginx.conf"

// frontHost is a report origin the shipped nginx.conf answers for; the
// sites phase's daemon is told the same content URL.
func frontHost(id int64) string {
	return strconv.FormatInt(id, 10) + ".reports-content.example.com"
}

// bareHTTP serves files (URL path -> bytes) from memory with a bare
// net/http handler: the Go ceiling the content origin is measured against.
// With headers (URL path -> header) it sends those instead of its
// Content-Type and Content-Length, assigned as made once (the second
// reference row: what the content origin's header set costs net/http).
func bareHTTP(files map[string][]byte, headers map[string]http.Header) (base string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if hd := headers[r.URL.Path]; hd != nil {
			h := w.Header()
			for k, v := range hd {
				h[k] = v
			}
			w.WriteHeader(http.StatusOK)
			w.Write(b)
			return
		}
		w.Header().Set("Content-Type", mime.TypeByExtension(filepath.Ext(r.URL.Path)))
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	})}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("bare net/http: %v", err)
		}
	}()
	return "http://" + l.Addr().String(), func() { srv.Close() }, nil
}

// startFront runs the shipped nginx.conf (its proxy_cache rules) in front
// of the daemon's API and content listeners, plain HTTP on loopback like
// the static nginx it is compared with (rendered by testserver.NginxFront,
// started like that one: not by testserver.Launch, whose locked thread's
// exit would deliver the death signal to the static nginx too when both
// were forked from it).
func (b *bench) startFront(ctx context.Context, contentAddr string) (base string, stop func(), err error) {
	dir := filepath.Join(b.work, "nginx-front")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	var ports [2]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return "", nil, err
		}
	}
	f := testserver.NginxFront{Shipped: shippedNginxConf, Dir: dir, API: b.base[len("http://"):], Content: contentAddr,
		Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), Addr80: "127.0.0.1:" + strconv.Itoa(ports[1])}
	conf, _, err := f.Write()
	if err != nil {
		return "", nil, err
	}
	ng, err := runNginx(ctx, dir, conf, f.Addr)
	if err != nil {
		return "", nil, fmt.Errorf("nginx with %s: %w", shippedNginxConf, err)
	}
	return ng.base, ng.stop, nil
}

// originHeaders is the header the content origin answers path with
// (Host host), Date aside: the bare handler's second row sends the same.
func originHeaders(contentAddr, host, path string, want []byte) (http.Header, error) {
	res, b, err := getHost("http://"+contentAddr, host, path)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK || !bytes.Equal(b, want) {
		return nil, fmt.Errorf("content origin %s: %d, %d bytes (want %d)", path, res.StatusCode, len(b), len(want))
	}
	res.Header.Del("Date")
	return res.Header, nil
}

// getHost GETs base+path with Host host and reads the whole body.
func getHost(base, host, path string) (*http.Response, []byte, error) {
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Host = host
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	return res, b, err
}

// checkFront asks the front for path twice with Host host: the bytes must
// be want, and the second answer must come from nginx's cache, or the
// front's rows would measure something else.
func checkFront(base, host, path string, want []byte) error {
	for i, status := range []string{"", "HIT"} {
		res, b, err := getHost(base, host, path)
		if err != nil {
			return err
		}
		got := res.Header.Get("X-Cache-Status")
		if res.StatusCode != http.StatusOK || !bytes.Equal(b, want) || (status != "" && got != status) {
			return fmt.Errorf("nginx front, request %d for %s: %d, X-Cache-Status %q, %d bytes (want %d)", i+1, path, res.StatusCode, got, len(b), len(want))
		}
	}
	return nil
}
