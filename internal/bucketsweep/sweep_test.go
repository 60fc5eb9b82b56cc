package bucketsweep_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/local"
	"github.com/reportd/reportd/internal/bucketsweep"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

var ctx = context.Background()

// A pass removes old objects no row references (reports, covers, PDFs of
// contents no report has), keeps referenced and young ones, runs the extra
// steps, and is skipped while another replica holds the lock.
func TestSweep(t *testing.T) {
	pg, err := pgstore.Open(ctx, testserver.DSN(t), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	dir := t.TempDir()
	st, err := local.Open(filepath.Join(dir, "objects"), filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	liveSHA, goneSHA := strings.Repeat("a", 64), strings.Repeat("b", 64)
	p, err := pg.CreateProject(ctx, report.Project{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := pg.NextReportID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pg.CreateReport(ctx, report.ReportRecord{Report: report.Report{ID: id, ProjectID: p.ID, FileName: "r.html",
		FileType: report.HTML, FilePath: "/uploads/reports/" + itoa(id) + ".html", UploadTime: report.LocalTime{Time: time.Now()}},
		Size: 6, SHA256: liveSHA})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	put := func(key string, at time.Time) {
		t.Helper()
		if _, err := st.Put(ctx, key, strings.NewReader("object"), blob.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if !at.IsZero() {
			p, _ := st.LocalPath(key)
			if err := os.Chtimes(p, at, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	live := []string{"reports/" + itoa(id) + ".html", "pdf/aa/" + liveSHA + "/v1.pdf", "pdf/aa/" + liveSHA + "/v1-0123.pdf"}
	young := []string{"reports/900.html", "pdf/bb/" + goneSHA + "/v2.pdf"}
	gone := []string{"reports/901.html", "covers/77/logo.png", "pdf/bb/" + goneSHA + "/v1.pdf", "pdf/odd.pdf"}
	for _, k := range live {
		put(k, old)
	}
	for _, k := range young {
		put(k, time.Time{})
	}
	for _, k := range gone {
		put(k, old)
	}
	steps := 0
	reg := prometheus.NewRegistry()
	sw, err := bucketsweep.New(bucketsweep.Config{Store: st, Refs: pg, Locker: pg, Grace: time.Hour, PDFPrefix: "pdf/",
		Steps: []bucketsweep.Step{func(context.Context) error { steps++; return nil }}, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}

	// Another replica sweeping: skipped, nothing removed.
	unlock, ok, err := pg.TryLock(ctx, "bucket-sweep")
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	if res, err := sw.Once(ctx); err != nil || res.Ran {
		t.Fatalf("pass under another's lock: %+v %v", res, err)
	}
	unlock()

	res, err := sw.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (bucketsweep.Result{Ran: true, Reports: 1, Covers: 1, PDFs: 2}); res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	if steps != 1 {
		t.Errorf("extra steps ran %d times, want 1", steps)
	}
	exists := func(k string) bool { _, err := st.Stat(ctx, k); return err == nil }
	for _, k := range append(live, young...) {
		if !exists(k) {
			t.Errorf("%s removed", k)
		}
	}
	for _, k := range gone {
		if exists(k) {
			t.Errorf("%s kept", k)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
