package convert

import (
	"context"
	"os"
	"testing"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

func TestCloseKillsEnginesAndCleansUp(t *testing.T) {
	testfixture.NeedChromium(t)
	testfixture.NeedOffice(t)
	cfg := testConfig(t.TempDir())
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Start(context.Background()) // returns at once; engines warm behind it
	convertOK(t, m, jobFor(t, report.HTML, []byte("<p>x</p>")))
	convertOK(t, m, jobFor(t, report.PPTX, fixture(t, "deck.pptx")))
	convertOK(t, m, jobFor(t, report.MD, []byte("# md")))
	renderer := m.md.PIDs()[0]
	cur, _ := m.chrome.Supervisor().Current()
	browser := cur.RootPID()
	helpers, soffices := m.office.WorkerPIDs()
	helper, soffice := helpers[0], soffices[0]
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for name, pid := range map[string]int{"chromium": browser, "office helper": helper, "soffice": soffice, "markdown renderer": renderer} {
		if engine.Alive(pid) {
			t.Errorf("%s (pid %d) still running after Close", name, pid)
		}
	}
	if _, err := os.Stat(m.workDir); !os.IsNotExist(err) {
		t.Errorf("work dir %s left behind", m.workDir)
	}
	if _, err := m.PDF(testfixture.Ctx(t), jobFor(t, report.HTML, []byte("late"))); err == nil {
		t.Error("PDF after Close succeeded")
	}
}
