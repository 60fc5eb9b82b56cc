package office

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// shapesDeck is the fixture deck with n text boxes of random text added to
// slide one: 20,000 make a 1.7 MB deck that passes the defuser (it
// compresses only ~6:1) and that LibreOffice grows to ~2.7 GB loading.
func shapesDeck(t testing.TB, n int) []byte {
	t.Helper()
	base := fixtureTB(t, "deck.pptx")
	slide := readParts(t, base)["ppt/slides/slide1.xml"]
	var b strings.Builder
	text := make([]byte, 60)
	for i := range n {
		rand.Read(text)
		fmt.Fprintf(&b, `<p:sp><p:nvSpPr><p:cNvPr id="%d" name=""/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>`+
			`<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="900000" cy="300000"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>`+
			`<p:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="en-US" sz="%d"/><a:t>%x</a:t></a:r></a:p></p:txBody></p:sp>`,
			1000+i, (i*7919)%9000000, (i*104729)%6000000, 800+i%2000, text)
	}
	return editDeck(t, base, map[string][]byte{
		"ppt/slides/slide1.xml": []byte(strings.Replace(slide, "</p:spTree>", b.String()+"</p:spTree>", 1)),
	})
}

// A deck that needs more memory than max_worker_rss fails with a clear
// error during the job, not after it; the worker is replaced and the next
// deck converts.
func TestOfficeMemoryCapDuringJob(t *testing.T) {
	testfixture.NeedOffice(t)
	e := newEngine(t, func(c *Config) { c.Workers = 1; c.MaxWorkerRSS = 512 << 20 })
	convertOK(t, e, report.PPTX, fixture(t, "deck.pptx"))
	// A damaged deck on a capped worker is still just damaged.
	_, err := deckPDF(t, e, report.PPTX, testfixture.Zip(t, "", map[string]string{
		"[Content_Types].xml": "<nonsense", "ppt/presentation.xml": "<<<not xml"}))
	if re := testfixture.WantKind(t, err, report.Conversion); !strings.Contains(re.Message, "damaged") {
		t.Errorf("damaged deck: message %q", re.Message)
	}
	if n := e.main.restarts.Load(); n != 0 {
		t.Errorf("restarts after a damaged deck = %d, want 0 (a healthy worker that cannot read a deck is kept)", n)
	}
	_, err = deckPDF(t, e, report.PPTX, shapesDeck(t, 20000))
	t.Logf("memory error: %v", err)
	re := testfixture.WantKind(t, err, report.Conversion)
	// LibreOffice reports the failed allocation as a load error or dies.
	// fault.go then decides: a peak at half the cap or bad_alloc is
	// a memory failure (renewed, no retry: the message names
	// convert.max_worker_rss, as it did in every run here); a soffice that
	// died is a crash; a load error is followed by the probe, which a
	// healthy worker passes (the deck is called damaged and the worker
	// kept: that would fail the restart count below, and would mean the
	// cap left soffice sound). What must hold is that the job fails during
	// the job and the worker is renewed once.
	t.Logf("message: %s", re.Message)
	if n := e.main.restarts.Load(); n != 1 {
		t.Errorf("restarts = %d, want 1", n)
	}
	pdf := convertOK(t, e, report.PPTX, append(fixture(t, "deck.pptx"), 0))
	if pages := testfixture.PDFInfo(t, pdf)["Pages"]; pages != "3" {
		t.Errorf("after the cap: pages %q, want 3", pages)
	}
}
