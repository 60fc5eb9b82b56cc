package daemon

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestMetrics scrapes /metrics after a few requests and looks for every
// family the daemon itself promises (conversion metrics belong to the
// converter and are registered on the same registry).
func TestMetrics(t *testing.T) {
	c := testConfig(t, t.TempDir())
	s, _ := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "m")
	if st, _, e, err := upload(httpClient, base, proj.ID, "md", "a.md", markdown("m", 1234)); err != nil || st != http.StatusCreated {
		t.Fatalf("upload: %d %v %v", st, e, err)
	}
	getBody(t, base+"/api/reports/ping")
	var reps []apiReport
	getJSON(t, base+"/api/reports", &reps)
	// One real conversion (Chromium renders the Markdown), then a cache hit.
	for range 2 {
		if pdf := getBody(t, fmt.Sprintf("%s/api/reports/%d/pdf", base, reps[0].ID)); !strings.HasPrefix(string(pdf), "%PDF-") {
			t.Fatalf("pdf: %.40q", pdf)
		}
	}
	text := string(getBody(t, base+"/metrics"))
	for _, want := range []string{
		`reportd_http_requests_total{class="ok",route="POST /api/reports",status="201"} 1`,
		`reportd_http_requests_total{class="ok",route="GET /api/reports/ping",status="200"} 1`,
		`reportd_http_request_duration_seconds_count{route="POST /api/projects"} 1`,
		`reportd_upload_bytes_total 1234`,
		`reportd_uploads_total 1`,
		`reportd_store_db_bytes `,
		`reportd_store_uploads_bytes 1234`,
		`reportd_store_uploads_files 1`,
		`reportd_pdf_conversions_total{result="ok",type="md"} 1`,
		`reportd_pdf_conversion_seconds_count{type="md"} 1`,
		`reportd_pdf_cache_misses_total 1`,
		`reportd_pdf_cache_hits_total 1`,
		`reportd_pdf_queue_depth{engine="chromium"} 0`,
		`reportd_pdf_queue_depth{engine="office"} 0`,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Unrouted paths share one label value, so clients cannot blow up cardinality.
	for i := range 3 {
		http.Get(fmt.Sprintf("%s/nope/%d", base, i))
	}
	text = string(getBody(t, base+"/metrics"))
	if strings.Contains(text, "/nope/") {
		t.Error("raw paths leak into metric labels")
	}
}

func TestMetricsDisabled(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.Metrics.Enabled = false
	s, _ := startServer(t, c)
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("/metrics answered although metrics.enabled is false")
	}
}
