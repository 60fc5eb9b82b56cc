package service

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

func TestGlobalUnicastTable(t *testing.T) {
	refused := []string{
		// IPv4 special-purpose
		"0.0.0.0", "0.1.2.3", "10.1.2.3", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.8.9.10",
		"169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.0.170", "192.0.2.1",
		"192.88.99.1", "192.168.1.1", "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9",
		"224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		// IPv6 special-purpose
		"::", "::1", "fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "ff02::1", "ff0e::1", "fec0::1",
		"2001:db8::1", "3fff::1", "100::1", "5f00::1", "64:ff9b:1::a00:1",
		"2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo
		"::2:3:4:5", "1::", "4000::1", "e000::1", // outside 2000::/3
		// IPv4 inside IPv6
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
		"::127.0.0.1", "::10.0.0.1", "::0.0.0.1",
		"64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "64:ff9b::c000:8",
		"2002:7f00:1::", "2002:a00:1::1", "2002:c0a8:101::",
	}
	allowed := []string{
		"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.32.0.1", "192.0.1.1",
		"198.17.255.255", "198.20.0.1", "223.255.255.255",
		"2606:4700::1111", "2a00:1450:4001::1", "2001:4860:4860::8888",
		"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	}
	for _, s := range refused {
		if globalUnicast(netip.MustParseAddr(s)) {
			t.Errorf("%s must be refused", s)
		}
		if publicIP(net.ParseIP(strings.Split(s, "%")[0])) {
			t.Errorf("publicIP(%s) must be false", s)
		}
	}
	for _, s := range allowed {
		if !globalUnicast(netip.MustParseAddr(s)) {
			t.Errorf("%s must be allowed", s)
		}
	}
	if publicIP(nil) {
		t.Error("a nil IP must be refused")
	}
}

// Every way of writing a loopback address in a URL ends in a refusal, and
// the loopback server behind it never sees a request.
func TestCoverURLFormsNeverReachLoopback(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "secret internal status page", http.StatusTeapot)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	s := New(Config{CoverFetchTimeout: 5 * time.Second}, nil, nil, nil)
	hosts := []string{
		"127.0.0.1", "localhost", "[::1]", "[::127.0.0.1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]",
		"[64:ff9b::7f00:1]", "[2002:7f00:1::]", "[0:0:0:0:0:ffff:127.0.0.1]",
	}
	// Decimal, hex, octal and short IPv4 forms are no IP literals to Go, so
	// they could only reach an address through DNS, whose answers meet the
	// same check at dial time (not dialled here: that would ask a resolver
	// outside the machine).
	for _, h := range []string{"2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0", "017700000001"} {
		if net.ParseIP(h) != nil {
			t.Errorf("%s parses as an IP literal", h)
		}
		if _, err := netip.ParseAddr(h); err == nil {
			t.Errorf("%s parses as an IP literal", h)
		}
	}
	for _, h := range hosts {
		_, _, err := s.fetchCover(context.Background(), "http://"+h+":"+port+"/logo.png")
		if !report.IsKind(err, report.Validation) {
			t.Errorf("%s: got %v, want a ValidationError", h, err)
		}
		if err != nil && strings.Contains(report.MessageOf(err), "418") {
			t.Errorf("%s: message echoes the remote status: %s", h, report.MessageOf(err))
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback server got %d requests", n)
	}
}

// With private targets allowed, a failing download still says only that it
// failed: neither the remote status nor its body reaches the client.
func TestCoverDownloadErrorHidesRemoteAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "secret internal status page", http.StatusTeapot)
	}))
	defer srv.Close()
	s := New(Config{CoverFetchTimeout: 5 * time.Second, AllowPrivateCoverURLs: true}, nil, nil, nil)
	_, _, err := s.fetchCover(context.Background(), srv.URL+"/logo.png")
	msg := report.MessageOf(err)
	if !report.IsKind(err, report.Validation) || msg != errCoverDownload {
		t.Fatalf("got %v (%q)", err, msg)
	}
}
