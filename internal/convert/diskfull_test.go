package convert

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// smallDisk is testfixture.SmallDisk.
func smallDisk(t *testing.T, size string) string { return testfixture.SmallDisk(t, size) }

// fill writes a ballast file until the file system at dir is full but for
// about leave bytes.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "ballast")
	if err := os.WriteFile(name, make([]byte, int64(st.Bavail)*st.Bsize-leave), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// A disk that fills up during a conversion is a StorageError that says so,
// not a ConversionError: it is not remembered as the document's failure,
// and once space is freed the same PDF converts at once.
func TestDiskFullDuringConversion(t *testing.T) {
	testfixture.NeedChromium(t)
	dir := smallDisk(t, "2m")
	m := newManager(t, func(c *Config) { c.CacheDir = filepath.Join(dir, "cache"); c.ChromiumTabs = 1 })
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "<p>paragraph %d of a report long enough to need more room than is left</p>\n", i)
	}
	job := jobFor(t, report.HTML, []byte(b.String()))
	ballast := fill(t, dir, 8<<10)

	for range 2 { // the second time too: nothing was remembered
		_, err := m.PDF(testfixture.Ctx(t), job)
		re := testfixture.WantKind(t, err, report.Storage)
		if !strings.Contains(re.Message, "the disk is full") {
			t.Errorf("message %q does not say the disk is full", re.Message)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(m.cache.tmpDir(), "*")); len(tmp) > 0 {
		t.Errorf("the failed conversion left %v behind", tmp)
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, job)), "paragraph 399")
}

// A site whose files cannot be read (the bucket or store is down) fails
// with that storage error, not a ConversionError: neither a page printed
// without its data nor a failure remembered for the report; once the
// store answers again the same PDF converts at once.
func TestSiteStorageFaultIsNotTheReports(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, nil)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"index.html": `<title>S</title><p id="t">waiting</p><a href="b.html">b</a>
<script>fetch('data.json').then(r => r.json()).then(d => { document.getElementById('t').textContent = d.text })</script>`,
		"b.html":    `<title>B</title><p>page b</p>`,
		"data.json": `{"text":"data loaded"}`,
	})
	for _, down := range []string{"data.json", "index.html", "b.html"} {
		for _, scope := range []string{"", report.ScopeSite} {
			if down == "b.html" && scope == "" {
				continue // the entry print does not read it
			}
			job := siteJobFor(t, dir, "index.html", "", scope)
			var outage atomic.Bool
			outage.Store(true)
			files := job.Site.Files
			job.Site.Files = func(ctx context.Context, p string) (io.ReadCloser, string, error) {
				if p == down && outage.Load() {
					return nil, "", report.Errorf(report.Storage, "cannot read the bucket: connection refused")
				}
				return files(ctx, p)
			}
			_, err := m.PDF(testfixture.Ctx(t), job)
			if re := testfixture.WantKind(t, err, report.Storage); !strings.Contains(re.Message, "cannot read the bucket") {
				t.Errorf("%s down, scope %q: message %q", down, scope, re.Message)
			}
			outage.Store(false)
			testfixture.WantText(t, testfixture.PDFText(t, convertOK(t, m, job)), "data loaded")
		}
	}
}
