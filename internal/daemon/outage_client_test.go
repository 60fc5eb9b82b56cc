package daemon

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

// TestClientRetriesThroughPostgresOutage: an upload by reportctl's client
// while PostgreSQL is down hears ServiceUnavailableError (503 in the
// conventional mode), retries, and lands exactly once when the database is
// back; the daemon keeps running throughout.
func TestClientRetriesThroughPostgresOutage(t *testing.T) {
	pg, dsn := testserver.OwnPG(t)
	c := testConfig(t, t.TempDir())
	c.Storage, c.Postgres.DSN, c.ErrorStatus = config.StoragePostgres, dsn, "conventional"
	s, _ := startServer(t, c)
	base := "http://" + s.Addr()
	p := createProject(t, base, "retries")

	var mu sync.Mutex
	var reasons []string
	cl, err := client.New(client.Options{Server: base, Retries: 1000, RetryWait: 100 * time.Millisecond, RetryMaxWait: time.Second,
		OnRetry: func(r client.Retry) {
			mu.Lock()
			reasons = append(reasons, r.Reason())
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	pg.Down()
	body := []byte("# during the outage\n")
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*waitLong)
		defer cancel()
		_, err := cl.UploadReport(ctx, report.ReportUpload{ProjectID: p.ID, FileType: report.MD,
			File: report.Upload{FileName: "outage.md", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }}})
		done <- err
	}()
	deadline := time.Now().Add(waitLong)
	for {
		mu.Lock()
		heard := strings.Join(reasons, "\n")
		mu.Unlock()
		if strings.Contains(heard, "ServiceUnavailableError: the metadata store (PostgreSQL) is unavailable") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no retry after ServiceUnavailableError; retries heard:\n%s", heard)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := pg.Up(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("upload after the outage: %v", err)
		}
	case <-time.After(5 * waitLong):
		t.Fatal("the upload never finished")
	}
	var reps []apiReport
	getJSON(t, base+"/api/reports", &reps)
	n := 0
	for _, r := range reps {
		if r.FileName == "outage.md" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("outage.md stored %d times, want once: %+v", n, reps)
	}
}
