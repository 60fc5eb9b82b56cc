package convert

import (
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// Only the document's failures are remembered: an engine that could not
// start (here: a "python" that exits at once) fails the request, and the
// same report converts at once once the engine is fixed, within the TTL.
// A damaged deck is remembered.
func TestOfficeFailureCacheRemembersOnlyTheDocument(t *testing.T) {
	testfixture.NeedOffice(t)
	m := newManager(t, func(c *Config) { c.PythonPath = "/bin/false"; c.FailureTTL = time.Hour })
	job := jobFor(t, report.PPTX, fixture(t, "deck.pptx"))
	_, err := m.PDF(testfixture.Ctx(t), job)
	if re := testfixture.WantKind(t, err, report.Conversion); !strings.Contains(re.Message, "could not start") {
		t.Fatalf("message %q, want the engine's start failure", re.Message)
	}
	if n := len(m.fails.m); n != 0 {
		t.Errorf("%d failures remembered after an engine start failure, want 0", n)
	}
	m.offCfg.PythonPath = "/usr/bin/python3" // the operator fixes the install
	convertOK(t, m, job)

	bad := jobFor(t, report.PPTX, testfixture.Zip(t, "", map[string]string{
		"[Content_Types].xml": "<nonsense", "ppt/presentation.xml": "<<<not xml"}))
	_, err = m.PDF(testfixture.Ctx(t), bad)
	testfixture.WantKind(t, err, report.Conversion)
	if n := len(m.fails.m); n != 1 {
		t.Errorf("%d failures remembered after a damaged deck, want 1", n)
	}
	done := m.office.Done()
	_, again := m.PDF(testfixture.Ctx(t), bad)
	if again == nil || report.MessageOf(again) != report.MessageOf(err) || m.office.Done() != done {
		t.Errorf("a damaged deck asked again: %v, want the remembered error without engine work", again)
	}
}

// The sandbox being unavailable is not remembered either.
func TestFailuresSkipEngineFaults(t *testing.T) {
	f := newFailures(time.Hour)
	f.put(1, "a", engine.Fault(report.Errorf(report.Conversion, "conversion is disabled: the engine sandbox cannot run here")))
	f.put(1, "b", report.Errorf(report.Unavailable, "conversion queue full"))
	f.put(1, "c", report.Errorf(report.Conversion, "damaged"))
	if f.get("a") != nil || f.get("b") != nil || f.get("c") == nil {
		t.Errorf("remembered: a %v, b %v, c %v; want only c", f.get("a"), f.get("b"), f.get("c"))
	}
	if report.KindOf(engine.Fault(report.Errorf(report.Conversion, "x"))) != report.Conversion ||
		report.MessageOf(engine.Fault(report.Errorf(report.Conversion, "x"))) != "x" {
		t.Error("engineErr changes what the client sees")
	}
}

func TestOfficeSandboxUnavailableIsNotRemembered(t *testing.T) {
	testfixture.NeedOffice(t)
	m := newManager(t, func(c *Config) { c.BwrapPath = "/nonexistent/bwrap"; c.FailureTTL = time.Hour })
	_, err := m.PDF(testfixture.Ctx(t), jobFor(t, report.PPTX, fixture(t, "deck.pptx")))
	if re := testfixture.WantKind(t, err, report.Conversion); !strings.Contains(re.Message, "sandbox") {
		t.Fatalf("message %q, want the sandbox named", re.Message)
	}
	if n := len(m.fails.m); n != 0 {
		t.Errorf("%d failures remembered after the sandbox was unavailable, want 0", n)
	}
}
