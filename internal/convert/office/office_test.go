package office

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

func TestOfficeTimeoutKillsAndReplacesWorker(t *testing.T) {
	testfixture.NeedOffice(t)
	e, w, deck := warmWorker(t)
	helper, soffice := w.pid.Load(), w.sofficePID.Load()
	if helper == 0 || soffice == 0 || !engine.Alive(int(helper)) || !engine.Alive(int(soffice)) {
		t.Fatalf("worker not running: helper %d soffice %d", helper, soffice)
	}

	e.cfg.JobTimeout = time.Millisecond                   // no real conversion fits
	_, err := deckPDF(t, e, report.PPTX, append(deck, 0)) // new content: no cache
	re := testfixture.WantKind(t, err, report.Conversion)
	if !strings.Contains(re.Message, "timed out") {
		t.Errorf("message %q does not say the conversion timed out", re.Message)
	}
	if e.main.restarts.Load() != 1 {
		t.Errorf("restarts = %d, want 1", e.main.restarts.Load())
	}
	// The whole process group died: the helper and its soffice.
	if engine.Alive(int(helper)) || engine.Alive(int(soffice)) {
		t.Errorf("old worker still alive: helper %v soffice %v", engine.Alive(int(helper)), engine.Alive(int(soffice)))
	}

	e.cfg.JobTimeout = 2 * time.Minute
	pdf := convertOK(t, e, report.PPTX, append(deck, 0, 0))
	if pages := testfixture.PDFInfo(t, pdf)["Pages"]; pages != "3" {
		t.Errorf("after replacement: pages %q, want 3", pages)
	}
	if p := w.pid.Load(); p == helper || p == 0 {
		t.Errorf("worker pid %d, want a new process", p)
	}
}

func TestOfficeCrashIsReplaced(t *testing.T) {
	testfixture.NeedOffice(t)
	e, w, deck := warmWorker(t)
	soffice := int(w.sofficePID.Load())
	if err := syscall.Kill(soffice, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for engine.Alive(soffice) { // the kernel reaps it quickly; poll rather than sleep a guess
		time.Sleep(10 * time.Millisecond)
	}
	pdf := convertOK(t, e, report.PPTX, append(deck, 9))
	if pages := testfixture.PDFInfo(t, pdf)["Pages"]; pages != "3" {
		t.Errorf("pages %q after a crash, want 3", pages)
	}
	if e.main.restarts.Load() != 1 {
		t.Errorf("restarts = %d, want 1", e.main.restarts.Load())
	}
}

// A deck that a healthy worker cannot read costs no worker restart.
func TestOfficeDamagedDeckKeepsWorker(t *testing.T) {
	testfixture.NeedOffice(t)
	e := newEngine(t, func(c *Config) { c.Workers = 1 })
	convertOK(t, e, report.PPTX, fixture(t, "deck.pptx"))
	for i := range 2 {
		_, err := deckPDF(t, e, report.PPTX, testfixture.Zip(t, "", map[string]string{
			"[Content_Types].xml": "<nonsense", "ppt/presentation.xml": fmt.Sprintf("<<<not xml %d", i)}))
		if re := testfixture.WantKind(t, err, report.Conversion); !strings.Contains(re.Message, "damaged") {
			t.Errorf("message %q does not say the deck is damaged", re.Message)
		}
	}
	if n := e.main.restarts.Load(); n != 0 {
		t.Errorf("restarts = %d, want 0", n)
	}
}

// A worker whose directory (profile and job) was removed under it while
// idle fails the next job for a reason that is not the deck's: it is
// replaced and the job succeeds on the fresh worker.
func TestOfficeBrokenWorkerIsReplacedAndJobRetried(t *testing.T) {
	testfixture.NeedOffice(t)
	e, w, deck := warmWorker(t)
	old := w.pid.Load()
	// The idle soffice may still be writing its profile (a registry flush):
	// RemoveAll then meets a file made after it read a folder. Try again.
	var err error
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if err = os.RemoveAll(w.dir); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	pdf := convertOK(t, e, report.PPTX, append(deck, 1))
	if pages := testfixture.PDFInfo(t, pdf)["Pages"]; pages != "3" {
		t.Errorf("pages %q, want 3", pages)
	}
	wantFreshWorker(t, e, w, old)
}

// With the small-deck lane, a small deck converts while a long deck holds
// the only main worker, and finishes first (order, not times).
func TestOfficeSmallDeckLane(t *testing.T) {
	testfixture.NeedOffice(t)
	slow := shapesDeck(t, 4000)
	e := newEngine(t, func(c *Config) { c.SmallDeckBytes = int64(len(slow)) - 1 })
	deck := fixture(t, "deck.pptx")
	convertOK(t, e, report.PPTX, deck) // warm the small lane
	if e.small.done.Load() != 1 || e.main.done.Load() != 0 {
		t.Fatalf("the small deck did not go to the small lane: small %d, main %d", e.small.done.Load(), e.main.done.Load())
	}
	order := make(chan string, 2)
	go func() {
		_, err := deckPDF(t, e, report.PPTX, slow)
		if err != nil {
			t.Errorf("slow deck: %v", err)
		}
		order <- "slow"
	}()
	// Wait until the slow deck holds the main worker (its job directory has it).
	for busy := false; !busy; time.Sleep(20 * time.Millisecond) {
		entries, _ := os.ReadDir(e.main.workers[0].job)
		busy = len(entries) > 0
	}
	convertOK(t, e, report.PPTX, append(deck, 3))
	order <- "small"
	if first := <-order; first != "small" {
		t.Errorf("%s deck finished first, want the small one", first)
	}
	<-order
}
