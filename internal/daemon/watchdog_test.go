package daemon

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/testserver"
)

// expectPrefix waits for a notify message that starts with prefix.
func expectPrefix(t *testing.T, msgs <-chan string, prefix string) string {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("notify socket closed before %q", prefix)
			}
			if strings.HasPrefix(m, prefix) {
				return m
			}
		case <-deadline:
			t.Fatalf("no %q… from the daemon", prefix)
		}
	}
}

// TestWatchdogWatchesTheProcess: under systemd (NOTIFY_SOCKET,
// WATCHDOG_USEC) a start-up that waits for PostgreSQL says so and extends
// its start timeout, and once serving, the watchdog keeps being pinged
// while PostgreSQL is down: an outage of the database must not get the
// daemon killed.
func TestWatchdogWatchesTheProcess(t *testing.T) {
	pg, dsn := testserver.OwnPG(t)
	pg.Down()
	sock, msgs := notifySocket(t)
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "400000")

	var logs testbin.Buffer
	c := testConfig(t, t.TempDir())
	c.Storage, c.Postgres.DSN, c.StartupWait = config.StoragePostgres, dsn, 10*waitLong
	s := &Server{Config: c, Log: logTo(&logs)}
	opened := make(chan error, 1)
	go func() { opened <- s.Open(t.Context()) }()
	expectPrefix(t, msgs, "STATUS=waiting for PostgreSQL")
	expectPrefix(t, msgs, "EXTEND_TIMEOUT_USEC=")
	if err := pg.Up(); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
	s, _ = startServerWith(t, s)
	expectPrefix(t, msgs, "READY=1")
	expectPrefix(t, msgs, "WATCHDOG=1")

	pg.Down()
	deadline := time.Now().Add(waitLong)
	for {
		resp, err := httpClient.Get("http://" + s.Addr() + "/readyz?exclude=chromium,office")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("readyz never saw PostgreSQL down")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The outage is seen; what was sent before it is dropped, and the
	// pings go on (every 200 ms: five take ≥ 1 s).
	for drained := false; !drained; {
		select {
		case <-msgs:
		default:
			drained = true
		}
	}
	for range 5 {
		expectPrefix(t, msgs, "WATCHDOG=1")
	}
	if strings.Contains(logs.String(), "withholding the watchdog ping") {
		t.Errorf("the watchdog ping was withheld during a database outage:\n%s", logs.String())
	}
	if err := pg.Up(); err != nil {
		t.Fatal(err)
	}
}
