package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestInstallReportctl: the projects page offers the one-liner that
// installs reportctl from this server, and the script it names is there
// with this server's URL in it.
func TestInstallReportctl(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	b := startBrowser(t)
	b.do(chromedp.Navigate(d.base + "/"))
	b.waitFor("the install panel", `!!document.querySelector('#install-reportctl summary')`, 30*time.Second)
	b.click("#install-reportctl > summary")
	got := eval[string](b, `document.getElementById('install-cmd').value`)
	if want := "curl -fsSL " + d.base + "/dl/install.sh | sh"; got != want {
		t.Fatalf("one-liner %q, want %q", got, want)
	}
	res, err := http.Get(d.base + "/dl/install.sh")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "server='"+d.base+"'") {
		t.Fatalf("GET /dl/install.sh: %d\n%s", res.StatusCode, body)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(p, "\n"))
	}
}
