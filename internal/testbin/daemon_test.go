package testbin

import (
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var bins = NewLazy("testbin-test-", "reportd")

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Remove()
	os.Exit(code)
}

func quiet(dataDir, addr string) Options {
	return Options{Addr: addr, DataDir: dataDir, Env: []string{"REPORTD_LOG_LEVEL=warn"}}
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
	// The killed daemon's serve file is stale: a new one on port 0 must
	// not be mistaken for it.
	d3 := StartT(t, bin, quiet(data, ""))
	if ping(t, d3) != http.StatusOK {
		t.Fatal("third start does not answer")
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

// The test process's REPORTD_* settings never reach the daemon: this one
// would stop it.
func TestStartCleanEnvironment(t *testing.T) {
	t.Setenv("REPORTD_ERROR_STATUS", "bogus")
	t.Setenv("REPORTD_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	d := StartT(t, bins.Path(t, "reportd"), quiet(t.TempDir(), ""))
	if ping(t, d) != http.StatusOK {
		t.Fatal("no answer")
	}
	for _, kv := range d.Cmd.Env {
		if strings.HasPrefix(kv, "REPORTD_ERROR_STATUS=") || strings.HasPrefix(kv, "REPORTD_CONFIG=") {
			t.Errorf("passed to the daemon: %s", kv)
		}
	}
}

// A misspelt key in the config file stops the real binary with a message
// naming the file, the key and the nearest valid one.
func TestStartMisspeltConfigKey(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "reportd.yaml")
	if err := os.WriteFile(conf, []byte("error_stauts: conventional\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := quiet(t.TempDir(), "")
	o.Config = conf
	d, err := Start(bins.Path(t, "reportd"), o)
	if err == nil {
		d.Stop()
		t.Fatal("reportd started with a misspelt key")
	}
	want := "config " + conf + ":1: unknown key error_stauts (did you mean error_status?)"
	if !errors.Is(err, errExited) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}
