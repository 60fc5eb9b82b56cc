package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/sitegen"
)

// dedupUploads is how many successive Playwright reports are published.
const dedupUploads = 20

type dedupResult struct {
	Uploads    int
	Files      int     // files of one report
	TreeBytes  []int64 // each report's unpacked size
	StoreBytes []int64 // bytes below uploads/ after each upload, less Base
	Base       int64   // bytes below uploads/ before the first (the sites phase's report)
	Settled    int64   // StoreBytes' last once the background precompression is done, less Base
}

// pwDedupConfig: Playwright's HTML reporter with traces on, so the report
// carries the trace viewer (trace/), as CI runs that keep traces do.
const pwDedupConfig = `const { defineConfig } = require('@playwright/test');
module.exports = defineConfig({ testDir: './tests', workers: 1, use: { trace: 'on' },
  reporter: [['html', { outputFolder: process.env.PW_HTML, open: 'never' }]] });
`

// pwDedupTests is a small suite (no page fixture: no browser needed) in
// which one test changes from run to run.
func pwDedupTests(run int) string {
	return fmt.Sprintf(`const { test, expect } = require('@playwright/test');
test('adds numbers', async () => { expect(1 + 1).toBe(2); });
test('multiplies wrongly', async () => { expect(2 * 2).toBe(5); });
test('build %[1]d checks its number', async () => { expect(%[1]d).toBe(%[1]d); });
test.describe('strings', () => {
  test('upper case', async () => { expect('a'.toUpperCase()).toBe('A'); });
  test('contains', async () => { expect('report').toContain('port'); });
});
`, run)
}

// dedup publishes dedupUploads successive Playwright HTML reports of the
// same suite, one test changed each time, and records the bytes the data
// directory holds after each: what content addressing saves against
// storing every upload whole.
func (b *bench) dedup(ctx context.Context, project int64) (*dedupResult, error) {
	pw := filepath.Join(sitegen.NPMDir(), "node_modules", ".bin", "playwright")
	if _, err := os.Stat(pw); err != nil {
		return nil, fmt.Errorf("Playwright is not installed in %s (bash scripts/install-deps.sh test installs it): %w", sitegen.NPMDir(), err)
	}
	dir := filepath.Join(b.work, "playwright")
	if err := os.MkdirAll(filepath.Join(dir, "tests"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "playwright.config.js"), []byte(pwDedupConfig), 0o644); err != nil {
		return nil, err
	}
	if err := os.Symlink(filepath.Join(sitegen.NPMDir(), "node_modules"), filepath.Join(dir, "node_modules")); err != nil && !os.IsExist(err) {
		return nil, err
	}
	res := &dedupResult{Uploads: dedupUploads}
	// The sites phase's report is still being precompressed in the
	// background: let that finish first, so it is not counted here.
	var err error
	if res.Base, err = settled(filepath.Join(b.dataDir, "uploads")); err != nil {
		return nil, err
	}
	for i := range dedupUploads {
		if err := os.WriteFile(filepath.Join(dir, "tests", "suite.spec.js"), []byte(pwDedupTests(i+1)), 0o644); err != nil {
			return nil, err
		}
		out := filepath.Join(dir, fmt.Sprintf("report-%02d", i+1))
		cmd := exec.CommandContext(ctx, pw, "test")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PW_HTML="+out, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=1")
		// The suite has a failing test on purpose: exit status 1 is expected.
		if outp, err := cmd.CombinedOutput(); err != nil {
			if _, statErr := os.Stat(filepath.Join(out, "index.html")); statErr != nil {
				return nil, fmt.Errorf("playwright test: %v: %s", err, outp)
			}
		}
		files, size, err := treeSize(out)
		if err != nil {
			return nil, err
		}
		archive := out + ".tar.gz"
		if o, err := exec.CommandContext(ctx, "tar", "czf", archive, "-C", dir, filepath.Base(out)).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("tar czf: %v: %s", err, o)
		}
		if _, err := b.uploadFile(ctx, archive, project, "html"); err != nil {
			return nil, err
		}
		_, stored, err := treeSize(filepath.Join(b.dataDir, "uploads"))
		if err != nil {
			return nil, err
		}
		res.Files = files
		res.TreeBytes = append(res.TreeBytes, size)
		res.StoreBytes = append(res.StoreBytes, stored-res.Base)
		os.RemoveAll(out)
		os.Remove(archive)
	}
	// Precompressed variants are made in the background after each
	// publish: count them once they are done.
	last, err := settled(filepath.Join(b.dataDir, "uploads"))
	if err != nil {
		return nil, err
	}
	res.Settled = last - res.Base
	logf("dedup: %d Playwright reports of %d files, %.1f MiB unpacked in all; uploads/ holds %.1f MiB", dedupUploads, res.Files,
		float64(sum(res.TreeBytes))/(1<<20), float64(res.StoreBytes[len(res.StoreBytes)-1])/(1<<20))
	return res, nil
}

// settled is the size of dir once it stopped growing (unchanged for 1 s,
// at most 2 minutes).
func settled(dir string) (int64, error) {
	_, size, err := treeSize(dir)
	for deadline := time.Now().Add(2 * time.Minute); err == nil && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		var now int64
		if _, now, err = treeSize(dir); err == nil && now == size {
			break
		}
		size = now
	}
	return size, err
}

func sum(v []int64) (n int64) {
	for _, x := range v {
		n += x
	}
	return n
}

func (r *results) dedupTable(b *strings.Builder) {
	d := r.Sites
	if d == nil || d.Dedup == nil || len(d.Dedup.StoreBytes) == 0 {
		return
	}
	x := d.Dedup
	whole := sum(x.TreeBytes)
	last := max(x.Settled, x.StoreBytes[len(x.StoreBytes)-1])
	fmt.Fprintf(b, "Deduplication: %d successive Playwright HTML reports (traces on, so each carries the trace viewer; %d files) of one suite "+
		"with one test changed each time, published as .tar.gz one after the other. Stored: the bytes below `data/uploads/` (content objects, their precompressed variants once "+
		"the background worker is done, and manifests), less what was there before the first upload.\n\n",
		x.Uploads, x.Files)
	b.WriteString("| Uploads | Unpacked, all uploads | Stored | Stored / unpacked | First upload stored | Each further upload, mean |\n|---|---|---|---|---|---|\n")
	first := x.StoreBytes[0]
	fmt.Fprintf(b, "| %d | %.2f MiB | %.2f MiB | %.1f%% | %.0f KiB | %.0f KiB |\n\n", x.Uploads, float64(whole)/(1<<20), float64(last)/(1<<20),
		100*float64(last)/float64(whole), float64(first)/1024, float64(last-first)/float64(max(1, x.Uploads-1))/1024)
}
