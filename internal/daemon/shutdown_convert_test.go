package daemon

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"syscall"
	"testing"
)

var chromiumQueue = regexp.MustCompile(`reportd_pdf_queue_depth\{engine="chromium"\} (\d+)`)

// TestSIGTERMFinishesConversion: a PDF conversion running when SIGTERM
// arrives is completed and delivered before the engines stop.
func TestSIGTERMFinishesConversion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	p := startReportd(t, t.TempDir(), "REPORTD_CONVERT_WARM_ON_START=true")
	proj := createProject(t, at(p, ""), "convert")
	// The inline script holds the page's load for a while, so the
	// conversion is certainly in flight when the signal comes.
	html := []byte(`<!doctype html><html><body><h1>Slow</h1><script>
const end = Date.now() + 2500; while (Date.now() < end) {}
</script><p>done</p></body></html>`)
	st, rep, e, err := upload(httpClient, at(p, ""), proj.ID, "html", "slow.html", html)
	if st != http.StatusCreated {
		t.Fatalf("upload: %d %v %v", st, e, err)
	}
	type result struct {
		status int
		body   []byte
		err    error
	}
	resc := make(chan result, 1)
	go func() {
		resp, err := httpClient.Get(at(p, fmt.Sprintf("/api/reports/%d/pdf", rep.ID)))
		if err != nil {
			resc <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resc <- result{resp.StatusCode, b, err}
	}()
	waitFor(t, "the conversion to start", func() bool {
		m := chromiumQueue.FindSubmatch(getBody(t, at(p, "/metrics")))
		if m == nil {
			return false
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n > 0
	})
	p.Signal(syscall.SIGTERM)
	res := <-resc
	if res.err != nil || res.status != http.StatusOK || !bytes.HasPrefix(res.body, []byte("%PDF-")) {
		t.Fatalf("conversion in flight at SIGTERM: %d %v %.100q\n%s", res.status, res.err, res.body, p.Log())
	}
	select {
	case <-p.Done():
	case <-waitAfter():
		t.Fatal("daemon did not exit")
	}
	if p.Err() != nil {
		t.Fatalf("exit: %v", p.Err())
	}
}
