package convert

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// fakePDF is a complete-looking PDF of about n bytes, for cache tests that
// need files and no engine.
func fakePDF(n int) []byte {
	b := []byte("%PDF-1.7\n")
	b = append(b, bytes.Repeat([]byte("x"), max(0, n-len(b)-6))...)
	return append(b, "%%EOF\n"...)
}

func putFake(t *testing.T, c *cache, id int64, key string, n int) string {
	t.Helper()
	f, err := c.tempFile()
	if err != nil {
		t.Fatal(err)
	}
	f.Write(fakePDF(n))
	f.Close()
	p := c.path(id, key, "v")
	if err := c.put(f.Name(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestCacheLRUEvictionRespectsCap(t *testing.T) {
	c, err := openCache(t.TempDir(), 3000, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := putFake(t, c, 1, "aa", 1000)
	b := putFake(t, c, 2, "bb", 1000)
	cc := putFake(t, c, 3, "cc", 1000)
	if f := c.open(a); f == nil { // a is now the most recent
		t.Fatal("miss on a fresh entry")
	} else {
		f.Close()
	}
	d := putFake(t, c, 4, "dd", 1000)
	if exists(b) {
		t.Error("the least recently used entry (b) was not evicted")
	}
	for _, p := range []string{a, cc, d} {
		if !exists(p) {
			t.Errorf("%s evicted, but it was more recent than b", filepath.Base(p))
		}
	}
	if n, total := c.size(); n != 3 || total > 3000 {
		t.Errorf("cache holds %d files, %d bytes; want 3 files within 3000", n, total)
	}
	// One file larger than the whole cap is kept until the next put, so its
	// caller can open it; everything else goes.
	big := putFake(t, c, 5, "ee", 5000)
	if !exists(big) {
		t.Error("a put evicted its own file")
	}
	if _, total := c.size(); total != 5000 {
		t.Errorf("total %d, want only the big file", total)
	}
}

func TestCacheSurvivesRestartAndDropsDebris(t *testing.T) {
	dir := t.TempDir()
	c, _ := openCache(dir, 1<<20, 0)
	keep := putFake(t, c, 7, "aa", 500)
	// What a crash leaves: a temp file and a half-written PDF.
	os.WriteFile(filepath.Join(dir, ".tmp", "pdf-1.tmp"), []byte("%PDF-"), 0o644)
	torn := filepath.Join(dir, "8", "bb-v.pdf")
	os.MkdirAll(filepath.Dir(torn), 0o755)
	os.WriteFile(torn, []byte("%PDF-1.7 half"), 0o644)

	c2, err := openCache(dir, 1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f := c2.open(keep); f == nil {
		t.Error("a cached PDF was lost across a restart")
	} else {
		f.Close()
	}
	if exists(torn) || exists(filepath.Join(dir, ".tmp", "pdf-1.tmp")) {
		t.Error("crash debris survived the rebuild")
	}
	if n, _ := c2.size(); n != 1 {
		t.Errorf("index has %d entries, want 1", n)
	}
}

func TestCacheHitServesSameBytesWithoutEngine(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	job := jobFor(t, report.HTML, []byte("<p>cached é 你好</p>"))
	first := convertOK(t, m, job)
	prints := m.chrome.Prints()
	second := convertOK(t, m, job)
	if !bytes.Equal(first, second) {
		t.Error("cache hit returned different bytes")
	}
	if m.chrome.Prints() != prints {
		t.Error("a cache hit ran the engine")
	}
	// A new manager over the same directory (a daemon restart) hits too.
	m2, err := New(m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	f, err := m2.PDF(testfixture.Ctx(t), job)
	if err != nil {
		t.Fatal(err)
	}
	third, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(first, third) || m2.chrome.Prints() != 0 {
		t.Error("the cache did not survive a restart")
	}
}

func TestForgetRemovesCachedPDFs(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	job := jobFor(t, report.MD, []byte("# forget me"))
	convertOK(t, m, job)
	other := jobFor(t, report.MD, []byte("# keep me"))
	convertOK(t, m, other)
	path := m.cache.path(job.ReportID, job.ContentKey, m.variant)
	if !exists(path) {
		t.Fatal("no cache file after conversion")
	}
	if err := m.Forget(job.ReportID); err != nil {
		t.Fatal(err)
	}
	if exists(path) || exists(filepath.Dir(path)) {
		t.Error("Forget left the report's cache files")
	}
	if !exists(m.cache.path(other.ReportID, other.ContentKey, m.variant)) {
		t.Error("Forget removed another report's PDF")
	}
	if err := m.Forget(999999); err != nil {
		t.Errorf("Forget of a report with no cache: %v", err)
	}
}

func TestConcurrentSameJobSharesOneConversion(t *testing.T) {
	testfixture.NeedOffice(t)
	m := sharedManager(t)
	job := jobFor(t, report.PPTX, append(fixture(t, "deck.pptx"), 1, 2, 3))
	before := m.office.Done()
	const n = 8
	var wg sync.WaitGroup
	results := make([][]byte, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := m.PDF(testfixture.Ctx(t), job)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			results[i], _ = io.ReadAll(f)
		}()
	}
	wg.Wait()
	if got := m.office.Done() - before; got != 1 {
		t.Errorf("%d concurrent requests ran %d conversions, want 1", n, got)
	}
	for i := 1; i < n; i++ {
		if !bytes.Equal(results[0], results[i]) {
			t.Fatal("concurrent requests got different PDFs")
		}
	}
}

func TestQueueFullIsUnavailable(t *testing.T) {
	m := newManager(t, func(c *Config) { c.QueueSize = 1; c.OfficeWorkers = 1; c.ChromiumTabs = 1 })
	// Take every slot the gates have, as running and queued jobs would.
	ctx, cancel := context.WithCancel(testfixture.Ctx(t))
	defer cancel()
	for _, g := range []*engine.Gate{m.chrome.Gate(), m.office.Gate()} {
		if _, err := g.Enter(ctx, 1); err != nil {
			t.Fatal(err)
		}
		go g.Enter(ctx, 1) // waits, until cancel
		waitQueued(t, g, 1)
	}
	for _, typ := range []report.FileType{report.HTML, report.PPTX} {
		content := []byte("<p>x</p>")
		if typ == report.PPTX {
			content = fixture(t, "deck.pptx")
		}
		_, err := m.PDF(testfixture.Ctx(t), jobFor(t, typ, content))
		if !m.chrome.Installed() && typ == report.HTML || m.office.Missing() != nil && typ == report.PPTX {
			continue // a missing engine reports that first
		}
		re := testfixture.WantKind(t, err, report.Unavailable)
		if !strings.Contains(re.Message, "queue full") {
			t.Errorf("%s: message %q", typ, re.Message)
		}
	}
}

func TestPrepareConvertsInBackground(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	job := jobFor(t, report.MD, []byte("# prepared"))
	path := m.cache.path(job.ReportID, job.ContentKey, m.variant)
	m.Prepare(job) // returns at once
	ctx := testfixture.Ctx(t)
	for !exists(path) {
		select {
		case <-ctx.Done():
			t.Fatal("Prepare never produced the cached PDF")
		case <-time.After(20 * time.Millisecond):
		}
	}
	prints := m.chrome.Prints()
	convertOK(t, m, job)
	if m.chrome.Prints() != prints {
		t.Error("the first request after Prepare converted again")
	}
}

func putVariant(t *testing.T, c *cache, id int64, variant string) string {
	t.Helper()
	f, err := c.tempFile()
	if err != nil {
		t.Fatal(err)
	}
	f.Write(fakePDF(100))
	f.Close()
	p := c.path(id, "aa", variant)
	if err := c.put(f.Name(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// Each new set of print options is a conversion and a cache file, and any
// reader may ask for one: a report keeps at most max_variants_per_report of
// them, the least recently used going first, and neither its default print
// nor other reports' files ever go to make room for its variants.
func TestCacheCapsPrintVariantsPerReport(t *testing.T) {
	dir := t.TempDir()
	c, err := openCache(dir, 1<<30, 3)
	if err != nil {
		t.Fatal(err)
	}
	def := putVariant(t, c, 1, "v")        // report 1's default print
	other := putVariant(t, c, 2, "v-0001") // another report's variant
	var vs []string
	for i := range 3 {
		vs = append(vs, putVariant(t, c, 1, fmt.Sprintf("v-%04d", i)))
	}
	if f := c.open(vs[0]); f != nil { // the oldest is used again, so it is the newest now
		f.Close()
	}
	// Many more variants than the cap, each the newest of its report.
	for i := 3; i < 50; i++ {
		vs = append(vs, putVariant(t, c, 1, fmt.Sprintf("v-%04d", i)))
	}
	var kept []string
	for _, p := range vs {
		if exists(p) {
			kept = append(kept, filepath.Base(p))
		}
	}
	if want := []string{"aa-v-0047.pdf", "aa-v-0048.pdf", "aa-v-0049.pdf"}; !slices.Equal(kept, want) {
		t.Errorf("variants kept %v, want the 3 most recent %v", kept, want)
	}
	if !exists(def) {
		t.Error("the report's default print was evicted by its variants")
	}
	if !exists(other) {
		t.Error("another report's variant was evicted by this report's variants")
	}
	if n, _ := c.size(); n != 5 {
		t.Errorf("index holds %d files, want 5", n)
	}
	// The cap holds across a restart too.
	for i := range 4 { // files a daemon with no cap left behind
		p := c.path(1, "bb", fmt.Sprintf("v-%04d", 100+i))
		os.WriteFile(p, fakePDF(100), 0o644)
		os.Chtimes(p, time.Now().Add(time.Duration(i)*time.Minute), time.Now().Add(time.Duration(i)*time.Minute))
	}
	c2, err := openCache(dir, 1<<30, 3)
	if err != nil {
		t.Fatal(err)
	}
	if c2.perID[filepath.Dir(def)] != 3 || !exists(def) {
		t.Errorf("after a restart report 1 has %d variants (want 3), default kept: %v", c2.perID[filepath.Dir(def)], exists(def))
	}
}
