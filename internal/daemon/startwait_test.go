package daemon

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/testserver"
)

// logTo is a Server logger that writes text lines to buf.
func logTo(buf *testbin.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitLog polls buf until it holds want.
func waitLog(t *testing.T, buf *testbin.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("log never said %q:\n%s", want, buf)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStartupWaitsForPostgres: with PostgreSQL down, start-up waits (and
// logs each try) instead of exiting, and serves once the database is up;
// within a short startup_wait it gives up saying so; a database that
// answers "no such database" fails at once, without waiting.
func TestStartupWaitsForPostgres(t *testing.T) {
	pg, dsn := testserver.OwnPG(t)
	pg.Down()

	// Gives up after startup_wait (the test is about that bound).
	var logs testbin.Buffer
	c := testConfig(t, t.TempDir())
	c.Storage, c.Postgres.DSN, c.StartupWait = config.StoragePostgres, dsn, time.Second
	s := &Server{Config: c, Log: logTo(&logs)}
	began := time.Now()
	err := s.Open(t.Context())
	s.Close()
	if err == nil || !strings.Contains(err.Error(), "startup_wait") || !strings.Contains(err.Error(), "connection refused") ||
		time.Since(began) < time.Second {
		t.Fatalf("Open with PostgreSQL down for longer than startup_wait: %v after %v", err, time.Since(began))
	}
	if !strings.Contains(logs.String(), "waiting for a dependency at start-up") {
		t.Errorf("the wait was not logged:\n%s", logs.String())
	}

	// Waits, then serves when PostgreSQL comes up.
	logs = testbin.Buffer{}
	c = testConfig(t, t.TempDir())
	c.Storage, c.Postgres.DSN, c.StartupWait = config.StoragePostgres, dsn, 10*waitLong
	s = &Server{Config: c, Log: logTo(&logs)}
	opened := make(chan error, 1)
	go func() { opened <- s.Open(t.Context()) }()
	waitLog(t, &logs, `dependency=PostgreSQL`)
	select {
	case err := <-opened:
		t.Fatalf("Open returned while PostgreSQL was down: %v", err)
	default:
	}
	if err := pg.Up(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-opened:
		if err != nil {
			t.Fatalf("Open after PostgreSQL came up: %v", err)
		}
	case <-time.After(waitLong):
		t.Fatalf("Open did not return after PostgreSQL came up:\n%s", logs.String())
	}
	s, _ = startServerWith(t, s)
	base := "http://" + s.Addr()
	createProject(t, base, "after the wait")
	resp, err := httpClient.Get(base + "/readyz?exclude=chromium,office")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz after the wait: %v %v", resp, err)
	}
	resp.Body.Close()
	if !strings.Contains(logs.String(), "dependency answers; starting") {
		t.Errorf("the end of the wait was not logged:\n%s", logs.String())
	}

	// Configuration, not an outage: no waiting.
	logs = testbin.Buffer{}
	c = testConfig(t, t.TempDir())
	c.Storage, c.StartupWait = config.StoragePostgres, 10*waitLong
	c.Postgres.DSN = strings.Replace(dsn, "/t_", "/no_such_db_", 1)
	s = &Server{Config: c, Log: logTo(&logs)}
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	err = s.Open(ctx)
	s.Close()
	if err == nil || !strings.Contains(err.Error(), "does not exist") || strings.Contains(logs.String(), "waiting for a dependency") {
		t.Errorf("a missing database: %v\n%s", err, logs.String())
	}
}

// TestStartupNamesS3Misconfigurations: Open on a real S3 server (versitygw)
// names a wrong access key, a wrong secret and a missing bucket, says which
// setting to fix, keeps the secret out, and does not wait for them.
func TestStartupNamesS3Misconfigurations(t *testing.T) {
	const secret = "sEcReT-do-not-print"
	for _, tc := range []struct {
		name  string
		edit  func(*config.Config)
		wants []string
	}{
		{"wrong access key", func(c *config.Config) { c.S3.AccessKey = "nobody" }, []string{`does not know s3.access_key "nobody"`}},
		{"wrong secret", func(c *config.Config) { c.S3.SecretKey = secret }, []string{"SignatureDoesNotMatch", "s3.secret_key"}},
		{"missing bucket", func(c *config.Config) { c.S3.Bucket = "no-such-bucket" }, []string{`s3.bucket "no-such-bucket" does not exist`, "NoSuchBucket"}},
	} {
		c, _ := s3Config(t, t.TempDir())
		c.StartupWait = 10 * waitLong // none of these is waited for
		tc.edit(&c)
		var logs testbin.Buffer
		s := &Server{Config: c, Log: logTo(&logs)}
		err := s.Open(t.Context())
		s.Close()
		if err == nil {
			t.Errorf("%s: Open succeeded", tc.name)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
			}
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), "waiting for a dependency") {
			t.Errorf("%s: the secret leaked or start-up waited: %v\n%s", tc.name, err, logs.String())
		}
	}
}
