package daemon

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/version"
)

// TestVersionFlag: `reportd --version` answers like `reportd version`.
func TestVersionFlag(t *testing.T) {
	bin := bins.Path(t, "reportd")
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := testbin.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("reportd %v: %v\n%s", args, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != "reportd "+version.String() && got != version.String() {
			t.Errorf("reportd %v printed %q", args, got)
		}
		if !strings.Contains(string(out), version.String()) {
			t.Errorf("reportd %v: no version in %q", args, out)
		}
	}
}

// TestStartupPrintsDashboardURL: the start-up line names the URL to open
// (TestOpenURL covers wildcard addresses and public_url).
func TestStartupPrintsDashboardURL(t *testing.T) {
	d := testbin.StartT(t, bins.Path(t, "reportd"), testbin.Options{DataDir: t.TempDir()})
	_, port, _ := net.SplitHostPort(d.Addr)
	want := "dashboard=http://127.0.0.1:" + port + "/"
	// The line is written as the listener starts serving, which may be just
	// after the first health check answered: wait for it, within a bound.
	deadline := time.Now().Add(waitLong)
	for !strings.Contains(d.Log(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the start-up log:\n%s", want, d.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
