package office

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// helperPID is the host PID of the worker's Python helper (inside its
// sandbox: a descendant of bwrap whose command line is python's).
func helperPID(t *testing.T, w *officeWorker) int {
	t.Helper()
	for _, p := range append([]int{int(w.pid.Load())}, engine.DescendantsOf(int(w.pid.Load()))...) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
		if argv := strings.Split(string(b), "\x00"); len(argv) > 2 && strings.Contains(argv[0], "python") && argv[1] == "-c" {
			return p
		}
	}
	t.Fatal("no helper process found in the worker's tree")
	return 0
}

// The helper dies in the middle of a job (the UNO bridge and its pipe to
// reportd break, soffice goes with it): the job is the worker's failure,
// not the deck's, so it runs again on a fresh worker and succeeds; one
// restart, a new process.
func TestOfficeHelperKilledMidJobIsRetried(t *testing.T) {
	testfixture.NeedOffice(t)
	e, w, _ := warmWorker(t)
	old := w.pid.Load()
	helper := helperPID(t, w)

	slow := shapesDeck(t, 3000) // seconds of work, so the kill lands mid-job
	done := make(chan error, 1)
	go func() {
		_, err := deckPDF(t, e, report.PPTX, slow)
		done <- err
	}()
	for busy := false; !busy; time.Sleep(10 * time.Millisecond) {
		entries, _ := os.ReadDir(w.job)
		busy = len(entries) > 0
	}
	time.Sleep(200 * time.Millisecond) // the helper has the job
	if err := syscall.Kill(helper, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// No error, so nothing for convert's failure memory to remember.
	if err := <-done; err != nil {
		t.Fatalf("the job failed instead of being retried on a fresh worker: %v", err)
	}
	wantFreshWorker(t, e, w, old)
}

// reportd's pipe to an idle helper breaks (its write end gives EPIPE while
// helper and soffice still run): the next job finds out on its first write,
// and runs on a fresh worker.
func TestOfficeBrokenPipeWhileIdleIsRetried(t *testing.T) {
	testfixture.NeedOffice(t)
	e, w, deck := warmWorker(t)
	old := w.pid.Load()
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	// The helper's own stdin stays open (it waits for a job, soffice runs):
	// only reportd's end is broken.
	orig := w.stdin
	t.Cleanup(func() { orig.Close() })
	w.stdin = pw
	soffice := int(w.sofficePID.Load())
	if !engine.Alive(soffice) {
		t.Fatal("soffice is not running before the job")
	}
	pdf := convertOK(t, e, report.PPTX, append(deck, 5))
	if pages := testfixture.PDFInfo(t, pdf)["Pages"]; pages != "3" {
		t.Errorf("pages %q, want 3", pages)
	}
	wantFreshWorker(t, e, w, old)
}

// wantFreshWorker: the job ran on a replacement of w (one restart, a new
// process), not on the worker it broke.
func wantFreshWorker(t *testing.T, e *Engine, w *officeWorker, old int64) {
	t.Helper()
	if n := e.main.restarts.Load(); n != 1 {
		t.Errorf("restarts = %d, want 1", n)
	}
	if p := w.pid.Load(); p == old || p == 0 {
		t.Errorf("worker pid %d, want a new process (was %d)", p, old)
	}
}

// warmWorker is an Engine with one office worker that has converted the
// fixture deck once (a warm, known-good worker), that worker and the deck.
func warmWorker(t *testing.T) (*Engine, *officeWorker, []byte) {
	t.Helper()
	e := newEngine(t, func(c *Config) { c.Workers = 1 })
	deck := fixture(t, "deck.pptx")
	convertOK(t, e, report.PPTX, deck)
	return e, e.main.workers[0], deck
}
