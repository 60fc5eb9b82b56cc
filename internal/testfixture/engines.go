// Checks shared by the conversion engines' tests (convert and its engine,
// chromium, office and markdown packages): which engines are installed,
// a generous context, and the shape of an error.

package testfixture

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// NeedChromium skips the test where no Chromium is installed; CI installs it
// (scripts/install-deps.sh).
func NeedChromium(t testing.TB) {
	t.Helper()
	for _, name := range []string{"chromium-headless-shell", "chromium"} {
		if _, err := exec.LookPath(name); err == nil {
			return
		}
	}
	t.Skip("chromium-headless-shell is not installed (apt-get install chromium-headless-shell)")
}

// NeedOffice skips the test where LibreOffice or Debian's python3-uno is
// not installed.
func NeedOffice(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("soffice"); err != nil {
		t.Skip("soffice is not installed (apt-get install libreoffice-impress-nogui)")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import uno").Run(); err != nil {
		t.Skip("python3-uno is not installed (apt-get install python3-uno)")
	}
}

// Ctx bounds one test's waits; it is generous (a loaded 2-core machine), a
// guard against hangs rather than a timed assertion.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// WantKind fails the test unless err is a *report.Error of kind k, which it
// returns.
func WantKind(t testing.TB, err error, k report.Kind) *report.Error {
	t.Helper()
	var re *report.Error
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a *report.Error", err, err)
	}
	if re.Kind != k {
		t.Fatalf("error kind %s, want %s: %v", re.Kind, k, err)
	}
	return re
}
