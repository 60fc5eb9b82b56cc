package convert

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/chromium"
	"github.com/reportd/reportd/internal/testfixture"
)

// closeFunc is an io.ReadCloser whose Close runs done after closing rc.
type closeFunc struct {
	io.ReadCloser
	done func()
}

func (c closeFunc) Close() error { err := c.ReadCloser.Close(); c.done(); return err }

// A page that asks for its largest file many times at once gets every
// answer, but the engine holds at most chromium.SiteAnswers of them at a time (the
// files are opened from a slow store, as a remote blob store is).
func TestSiteBoundsFilesHeldAtOnce(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := t.TempDir()
	const asks = 40
	writeFiles(t, dir, map[string]string{
		"index.html": `<!DOCTYPE html><title>Many</title><div id="out">waiting</div>
<script>
Promise.all(Array.from({length: ` + strconv.Itoa(asks) + `}, (_, i) => fetch("big.txt?" + i).then(r => r.text())))
  .then(all => { out.textContent = "got " + all.filter(t => t.length === 1 << 20).length; },
        e => { out.textContent = "failed " + e; });
</script>`,
		"big.txt": strings.Repeat("x", 1<<20),
	})
	job := siteJobFor(t, dir, "index.html", "", "")
	var mu sync.Mutex
	open, most := 0, 0
	files := job.Site.Files
	job.Site.Files = func(ctx context.Context, p string) (io.ReadCloser, string, error) {
		if p != "big.txt" {
			return files(ctx, p)
		}
		mu.Lock()
		open++
		most = max(most, open)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		rc, ct, err := files(ctx, p)
		done := func() { mu.Lock(); open--; mu.Unlock() }
		if err != nil {
			done()
			return nil, "", err
		}
		return closeFunc{rc, done}, ct, nil
	}
	text := testfixture.PDFText(t, convertOK(t, sharedManager(t), job))
	testfixture.WantText(t, text, "got "+strconv.Itoa(asks))
	mu.Lock()
	defer mu.Unlock()
	if most > chromium.SiteAnswers || most == 0 {
		t.Errorf("%d of %d files held at once, bound %d", most, asks, chromium.SiteAnswers)
	}
	t.Logf("%d of %d files held at once", most, asks)
}

// The engine asks the site's files only for clean paths under the root: a
// page's request for ..%2F..%2Fsecret (which the browser does not resolve)
// reaches Files as "secret.txt", never with "..".
func TestSiteAsksOnlyCleanPaths(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.html": `<!DOCTYPE html><title>Up</title><div id="out">waiting</div>
<script>
Promise.all(["sub/..%2F..%2F..%2Fsecret.txt", "..%2fsecret.txt", "/a/%2e%2e%2F%2e%2e%2Fsecret.txt"].map(u => fetch(u).then(r => r.status)))
  .then(s => { out.textContent = "statuses " + s.join(" "); });
</script>`,
		"secret.txt": "inside",
	})
	job := siteJobFor(t, dir, "index.html", "", "")
	var mu sync.Mutex
	var asked []string
	files := job.Site.Files
	job.Site.Files = func(ctx context.Context, p string) (io.ReadCloser, string, error) {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return files(ctx, p)
	}
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, sharedManager(t), job)), "statuses 200 200 200")
	mu.Lock()
	defer mu.Unlock()
	for _, p := range asked {
		if strings.Contains(p, "..") || strings.HasPrefix(p, "/") {
			t.Errorf("Files asked for %q", p)
		}
	}
}
