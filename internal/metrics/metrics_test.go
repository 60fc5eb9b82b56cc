package metrics

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

func TestObserverAndStoreSize(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "reportd.db")
	os.WriteFile(db, make([]byte, 4096), 0o600)
	up := filepath.Join(dir, "uploads", "reports")
	os.MkdirAll(up, 0o750)
	os.WriteFile(filepath.Join(up, "1.md"), make([]byte, 100), 0o600)

	m := New()
	size := NewStoreSize(db, filepath.Join(dir, "uploads"))
	m.Registry.MustRegister(size)
	m.ObserveRequest(httpapi.Request{Route: "GET /api/reports/{id}", Status: 200, Class: httpapi.ClassOK, Bytes: 10, Seconds: 0.01})
	m.ObserveRequest(httpapi.Request{Route: "GET /api/reports/{id}", Status: 500, Class: httpapi.ClassClientError,
		ErrorType: report.NotFound, Bytes: 5, Seconds: 0.02})
	m.ObserveUpload(1234)

	text := scrape(t, m)
	for _, want := range []string{
		`reportd_http_requests_total{class="client_error",route="GET /api/reports/{id}",status="500"} 1`,
		`reportd_http_requests_total{class="ok",route="GET /api/reports/{id}",status="200"} 1`,
		`reportd_http_errors_total{route="GET /api/reports/{id}",type="NotFoundError"} 1`,
		`reportd_http_request_duration_seconds_count{route="GET /api/reports/{id}"} 2`,
		`reportd_http_response_bytes_total{route="GET /api/reports/{id}"} 15`,
		`reportd_upload_bytes_total 1234`,
		`reportd_store_db_bytes 4096`,
		`reportd_store_uploads_bytes 100`,
		`reportd_store_uploads_files 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	// Within MinInterval the walk is not repeated; after it, it is.
	os.WriteFile(filepath.Join(up, "2.md"), make([]byte, 50), 0o600)
	if text := scrape(t, m); !strings.Contains(text, "reportd_store_uploads_bytes 100") {
		t.Error("the uploads walk ran again within MinInterval")
	}
	size.MinInterval = 0
	if text := scrape(t, m); !strings.Contains(text, "reportd_store_uploads_bytes 150") || !strings.Contains(text, "reportd_store_uploads_files 2") {
		t.Error("the uploads walk did not run after MinInterval")
	}
}
