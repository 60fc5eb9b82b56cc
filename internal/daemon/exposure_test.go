package daemon

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/testbin"
)

// Listening on every interface without a token is refused unless
// auth.anonymous says it is meant; with it (or with a token) the daemon
// serves and the log says what is exposed. The tests only bind 0.0.0.0 and
// talk to it over 127.0.0.1.
func TestServeBeyondLoopbackNeedsTokenOrAnonymous(t *testing.T) {
	bin := bins.Path(t, "reportd")
	d, err := testbin.Start(bin, testbin.Options{Addr: "0.0.0.0:0", DataDir: t.TempDir()})
	if err == nil {
		d.Stop()
		t.Fatalf("reportd served on 0.0.0.0 without a token or auth.anonymous:\n%s", d.Log())
	}
	out := err.Error()
	for _, want := range []string{"auth.token", "auth.anonymous: true", "REPORTD_AUTH_ANONYMOUS"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not mention %s:\n%s", want, out)
		}
	}

	for name, env := range map[string][]string{
		"anonymous":  {"REPORTD_AUTH_ANONYMOUS=true"},
		"token":      {"REPORTD_AUTH_TOKEN=" + strongToken},
		"public_url": {"REPORTD_AUTH_TOKEN=" + strongToken, "REPORTD_PUBLIC_URL=https://reports.example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			p := testbin.StartT(t, bin, testbin.Options{Addr: "0.0.0.0:0", DataDir: t.TempDir(), Env: env})
			_, port, err := net.SplitHostPort(p.Addr)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := httpClient.Get("http://127.0.0.1:" + port + "/api/reports/ping")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("ping: %s", resp.Status)
			}
			warned := strings.Contains(p.Log(), "serving without authentication beyond loopback")
			if warned != (name == "anonymous") {
				t.Fatalf("anonymous warning logged: %v, want %v\n%s", warned, name == "anonymous", p.Log())
			}
			// Links follow the request's Host unless public_url says where users are.
			if noted := strings.Contains(p.Log(), "public_url is not set"); noted != (name != "public_url") {
				t.Fatalf("public_url warning logged: %v, want %v\n%s", noted, name != "public_url", p.Log())
			}
		})
	}
}

// strongToken is an auth.token long enough to serve beyond loopback.
const strongToken = "k7Qe2vX9pL4mN8rT1wY6zB3c"

// An auth.token shorter than 24 characters is refused beyond loopback and
// warned about on loopback, both saying how to make a strong one.
func TestShortTokenRefusedBeyondLoopback(t *testing.T) {
	bin := bins.Path(t, "reportd")
	short := []string{"REPORTD_AUTH_TOKEN=" + strongToken[:23]}
	d, err := testbin.Start(bin, testbin.Options{Addr: "0.0.0.0:0", DataDir: t.TempDir(), Env: short})
	if err == nil {
		d.Stop()
		t.Fatalf("reportd served on 0.0.0.0 with a 23-character token:\n%s", d.Log())
	}
	for _, want := range []string{"23 characters", "openssl rand -base64 32", "auth.token"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not mention %q:\n%s", want, err)
		}
	}
	p := testbin.StartT(t, bin, testbin.Options{DataDir: t.TempDir(), Env: short})
	if log := p.Log(); !strings.Contains(log, "auth.token is only 23 characters") || !strings.Contains(log, "openssl rand -base64 32") {
		t.Errorf("no warning about the short token on loopback:\n%s", log)
	}
	p2 := testbin.StartT(t, bin, testbin.Options{DataDir: t.TempDir(), Env: []string{"REPORTD_AUTH_TOKEN=" + strongToken}})
	if strings.Contains(p2.Log(), "auth.token is only") {
		t.Errorf("a 24-character token was warned about:\n%s", p2.Log())
	}
}

// The Host allow-list covers the whole daemon: API, health check,
// dashboard, metrics and the admin endpoints; public_url and allowed_hosts
// extend it.
func TestDaemonHostAllowList(t *testing.T) {
	p := startReportd(t, t.TempDir(), "REPORTD_DASHBOARD=true",
		"REPORTD_PUBLIC_URL=https://reports.example.com/", "REPORTD_ALLOWED_HOSTS=proxy.internal.example,*.corp.example")
	get := func(path, host string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", at(p, path), nil)
		req.Host = host
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, path := range []string{"/api/reports/ping", "/api/projects", "/", "/metrics", "/admin/backup"} {
		for _, host := range []string{"evil.example:8080", "evil.example", "example.com", "reports.example.com.evil.example"} {
			if resp := get(path, host); resp.StatusCode != http.StatusInternalServerError || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("Host %s %s: %s %s, want the API's error body", host, path, resp.Status, resp.Header.Get("Content-Type"))
			}
		}
		if path == "/admin/backup" {
			continue // needs the admin key; its own refusal is tested elsewhere
		}
		for _, host := range []string{"localhost:1234", "127.0.0.1", "reports.example.com", "proxy.internal.example:8443", "a.corp.example"} {
			if resp := get(path, host); resp.StatusCode != http.StatusOK {
				t.Errorf("Host %s %s: %s", host, path, resp.Status)
			}
		}
	}
}

// max_connections caps the connections served at once, and a client past
// it never waits in the kernel's queue: with the cap held by idle
// connections a new one is answered at once — busy while they are fresh,
// served once they have kept the daemon waiting long enough to be
// displaced (closed).
func TestMaxConnections(t *testing.T) {
	p := startReportd(t, t.TempDir(), "REPORTD_MAX_CONNECTIONS=2", "REPORTD_READ_HEADER_TIMEOUT=2m", "REPORTD_IDLE_TIMEOUT=2m",
		"REPORTD_ERROR_STATUS=conventional")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: waitLong}
	// get answers path past the cap: busy answers are retried (as
	// Retry-After says, sooner here); anything else fails the test.
	get := func(path string) []byte {
		t.Helper()
		deadline := time.Now().Add(waitLong)
		for {
			resp, err := client.Get(at(p, path))
			if err != nil {
				t.Fatalf("GET %s past the cap: %v", path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return b
			}
			var e apiError
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || json.Unmarshal(b, &e) != nil || e.Type != "ServiceUnavailableError" {
				t.Fatalf("GET %s past the cap: %s %s", path, resp.Status, b)
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: still busy after %v", path, waitLong)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Two connections admitted (each answered a ping), then left idle.
	var held []net.Conn
	for len(held) < 2 {
		c, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /api/reports/ping HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(waitLong))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("holding a connection: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			held = append(held, c)
		} // else busy: a connection from before the test is still closing
	}
	// Clients past the cap are answered; once the held connections have
	// idled long enough, one of them is closed to make room.
	deadline := time.Now().Add(waitLong)
	for {
		get("/api/reports/ping")
		for _, c := range held {
			c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			if _, err := c.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return // displaced
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pings past the cap were served for %v but no idle held connection was displaced", waitLong)
		}
	}
}

func TestExposureConfig(t *testing.T) {
	for _, env := range [][2]string{
		{"REPORTD_PUBLIC_URL", "reports.example.com"},
		{"REPORTD_PUBLIC_URL", "ftp://reports.example.com"},
		{"REPORTD_ALLOWED_HOSTS", "ok.example,http://bad.example/"},
		{"REPORTD_MAX_CONNECTIONS", "-1"},
		{"REPORTD_MAX_INLINE_CONTENT", "plenty"},
		{"REPORTD_UPLOAD_MIN_RATE", "fast"},
		{"REPORTD_UPLOAD_RATE_GRACE", "0s"},
		{"REPORTD_UPLOAD_IDLE_TIMEOUT", "-1s"},
		{"REPORTD_MAX_CONNECTIONS_PER_CLIENT", "-2"},
		{"REPORTD_TRUSTED_PROXIES", "10.0.0.1,proxy.example"},
		{"REPORTD_TRUSTED_PROXIES", "10.0.0.0/33"},
		{"REPORTD_DOWNLOAD_MIN_RATE", "quick"},
		{"REPORTD_DOWNLOAD_RATE_GRACE", "0s"},
		{"REPORTD_DOWNLOAD_IDLE_TIMEOUT", "-1s"},
		{"REPORTD_WRITE_TIMEOUT", "-1m"},
	} {
		t.Run(env[0]+"="+env[1], func(t *testing.T) {
			if _, err := loadArgs(t, []string{env[0] + "=" + env[1]}, "--config", os.DevNull); err == nil {
				t.Fatalf("%s=%s accepted", env[0], env[1])
			}
		})
	}
	c, err := loadArgs(t, []string{"REPORTD_PUBLIC_URL=https://Reports.Example.com:8443/base", "REPORTD_ALLOWED_HOSTS=a.example, *.b.example"}, "--config", os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(allowedHosts(&c, &net.TCPAddr{IP: net.ParseIP("192.0.2.5"), Port: 80}), " ")
	if want := "a.example *.b.example Reports.Example.com 192.0.2.5"; got != want {
		t.Fatalf("allowed hosts %q, want %q", got, want)
	}
	if got := allowedHosts(&c, &net.TCPAddr{IP: net.IPv4zero, Port: 80}); len(got) != 3 {
		t.Fatalf("a wildcard listen address added a host: %v", got)
	}
	if c.MaxConnections != 1024 || c.MaxInlineContent != 8<<20 || c.UploadMinRate != 64<<10 {
		t.Fatalf("defaults: %+v", c)
	}
	if c.MaxConnectionsPerClient != 0 || c.DownloadMinRate != 32<<10 || c.DownloadRateGrace != 10*time.Second || c.WriteTimeout != 5*time.Minute {
		t.Fatalf("guard defaults: %+v", c)
	}
	c, err = loadArgs(t, []string{"REPORTD_TRUSTED_PROXIES=10.0.0.5, 10.1.0.0/16,::ffff:192.0.2.1", "REPORTD_MAX_CONNECTIONS_PER_CLIENT=8"}, "--config", os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	o := guardOptions(&c, "api", nil)
	if got := fmt.Sprint(o.TrustedProxies); got != "[10.0.0.5/32 10.1.0.0/16 192.0.2.1/32]" || o.PerClient != 8 || o.Status != http.StatusInternalServerError {
		t.Fatalf("guard options: %s %+v", got, o)
	}
}
