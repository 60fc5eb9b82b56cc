package testbin

import (
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"testing"
)

var bins = NewLazy("testbin-test-", "reportd")

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Remove()
	os.Exit(code)
}

// quiet keeps the developer's REPORTD_* settings and the engines out.
func quiet(dataDir, addr string) Options {
	return Options{Addr: addr, DataDir: dataDir, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dataDir,
		"REPORTD_LOG_LEVEL=warn", "REPORTD_CONVERT_WARM_ON_START=false"}}
}

func ping(t *testing.T, d *Daemon) int {
	t.Helper()
	resp, err := http.Get(d.URL() + "/api/reports/ping")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestStartStopRestartKill(t *testing.T) {
	bin, data := bins.Path(t, "reportd"), t.TempDir()
	d := StartT(t, bin, quiet(data, ""))
	if st := ping(t, d); st != http.StatusOK {
		t.Fatalf("ping: %d", st)
	}
	d.Stop()
	if err := d.Err(); err != nil {
		t.Fatalf("after SIGTERM reportd exited with %v, want status 0\n%s", err, d.Log())
	}
	d.Stop() // a second Stop is a no-op

	// Same address and data directory, as the outage tests restart it.
	d2 := StartT(t, bin, quiet(data, d.Addr))
	if d2.Addr != d.Addr || ping(t, d2) != http.StatusOK {
		t.Fatalf("restart on %s: serving on %s", d.Addr, d2.Addr)
	}
	d2.Kill()
	var exit *exec.ExitError
	if err := d2.Err(); !errors.As(err, &exit) {
		t.Fatalf("after SIGKILL: %v, want an exit error", err)
	}
}

func TestStartOnTakenAddrFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d, err := Start(bins.Path(t, "reportd"), quiet(t.TempDir(), l.Addr().String()))
	if err == nil {
		d.Stop()
		t.Fatalf("reportd started on %s, which is taken", l.Addr())
	}
	if !errors.Is(err, errExited) {
		t.Fatalf("got %v, want the daemon to have exited", err)
	}
}
