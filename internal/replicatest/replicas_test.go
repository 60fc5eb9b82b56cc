package replicatest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/testfixture"
)

func htmlReport(tag string, n int) []byte {
	return []byte("<!doctype html><html><head><title>" + tag + "</title></head><body><h1>" + tag +
		"</h1><p>" + strings.Repeat("replicated ", n) + "</p></body></html>")
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestTwoReplicas runs two reportd processes on one PostgreSQL and one
// bucket behind a round-robin proxy: what one stores the other serves;
// counters stay exact under 32 concurrent uploaders across both; a replica
// killed mid-upload leaves no row and no object, and the bucket sweep
// removes what a crash leaves (orphan objects, an open multipart upload)
// but nothing referenced; one report's PDF asked for through both at once
// is converted once, into the bucket; convert_on_upload converts there.
func TestTwoReplicas(t *testing.T) {
	c := newCluster(t)
	dirA := t.TempDir()
	a := c.start(dirA)
	dirB := t.TempDir()
	b := c.start(dirB)
	px := proxy(t, a, b).URL
	ctx := context.Background()

	p := createProject(t, px, "replicated")
	want := 0

	// Each replica serves what the other stored.
	for i, pair := range [][2]string{{a.URL(), b.URL()}, {b.URL(), a.URL()}} {
		content := htmlReport(fmt.Sprintf("cross-%d", i), 50)
		r, err := upload(pair[0], p.ID, fmt.Sprintf("cross-%d.html", i), content)
		if err != nil {
			t.Fatal(err)
		}
		want++
		if got := get(t, pair[1]+r.FilePath); !bytes.Equal(got, content) {
			t.Errorf("report %d through the other replica: %d bytes, want %d", r.ID, len(got), len(content))
		}
		if got := get(t, fmt.Sprintf("%s/api/reports/%d/download", pair[1], r.ID)); !bytes.Equal(got, content) {
			t.Errorf("download of %d through the other replica differs", r.ID)
		}
	}

	t.Run("counters exact under 32 uploaders", func(t *testing.T) {
		const uploaders, each = 32, 3
		var wg sync.WaitGroup
		errs := make(chan error, uploaders*each)
		for u := range uploaders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if _, err := upload(px, p.ID, fmt.Sprintf("u%d-%d.html", u, i), htmlReport(fmt.Sprintf("u%d-%d", u, i), 20)); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		want += uploaders * each
		for _, d := range []string{a.URL(), b.URL()} {
			got := projectsOf(t, d)[p.ID]
			if got.ReportCount != want || got.TodayNewReports != want {
				t.Errorf("%s: reportCount %d, todayNewReports %d, want %d and %d", d, got.ReportCount, got.TodayNewReports, want, want)
			}
		}
		if n := len(c.keys("reports/")); n != want {
			t.Errorf("%d objects under reports/, want %d", n, want)
		}
	})

	content := htmlReport("converted once", 400)
	r, err := upload(a.URL(), p.ID, "once.html", content)
	if err != nil {
		t.Fatal(err)
	}
	want++
	pdfDir := "pdf/" + sha(content)[:2] + "/" + sha(content) + "/"
	t.Run("one conversion for concurrent requests to both", func(t *testing.T) {
		const each = 3
		var wg sync.WaitGroup
		pdfs := make([][]byte, 2*each)
		errs := make([]error, 2*each)
		for i := range 2 * each {
			base := []string{a.URL(), b.URL()}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(fmt.Sprintf("%s/api/reports/%d/pdf", base, r.ID))
				if err != nil {
					errs[i] = err
					return
				}
				defer resp.Body.Close()
				pdfs[i], errs[i] = io.ReadAll(resp.Body)
				if errs[i] == nil && resp.StatusCode != http.StatusOK {
					errs[i] = fmt.Errorf("%s: %s %s", base, resp.Status, pdfs[i])
				}
			}()
		}
		wg.Wait()
		for i := range pdfs {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if !bytes.HasPrefix(pdfs[i], []byte("%PDF-")) || !bytes.Equal(pdfs[i], pdfs[0]) {
				t.Errorf("answer %d: %d bytes, not the same PDF as the first", i, len(pdfs[i]))
			}
		}
		conv := func() float64 {
			return counter(t, a, "reportd_pdf_conversions_total", `type="html"`) + counter(t, b, "reportd_pdf_conversions_total", `type="html"`)
		}
		if n := conv(); n != 1 {
			t.Errorf("%v html conversions across both replicas, want 1", n)
		}
		cached := c.keys(pdfDir)
		if len(cached) != 1 {
			t.Fatalf("shared PDFs of the report: %v, want one", cached)
		}
		for _, info := range cached {
			if info.Size != int64(len(pdfs[0])) {
				t.Errorf("cached PDF %s holds %d bytes, served %d", info.Key, info.Size, len(pdfs[0]))
			}
		}
		// Later requests to either are hits: still one conversion, and a
		// range of the cached object.
		for _, d := range []string{a.URL(), b.URL()} {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/reports/%d/pdf", d, r.ID), nil)
			req.Header.Set("Range", "bytes=0-4")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusPartialContent || string(got) != "%PDF-" {
				t.Errorf("%s: range of the cached PDF: %s %q", d, resp.Status, got)
			}
		}
		if n := conv(); n != 1 {
			t.Errorf("%v html conversions after the hits, want 1", n)
		}
		shared := func(result string) float64 {
			return counter(t, a, "reportd_pdf_shared_cache_total", `result="`+result+`"`) +
				counter(t, b, "reportd_pdf_shared_cache_total", `result="`+result+`"`)
		}
		if conv, hits, misses := shared("converted"), shared("hit"), shared("miss"); conv != 1 || hits < 2 || hits+misses != 2*each+2 {
			t.Errorf("shared cache: %v converted, %v hits, %v misses; want 1 converted and %d requests, at least the 2 ranged ones hits", conv, hits, misses, 2*each+2)
		}
		// A hit never fetches the original: with the original gone from
		// the bucket, both still serve the PDF.
		origKey := strings.TrimPrefix(r.FilePath, "/uploads/")
		if err := c.bucket.Delete(ctx, origKey); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{a.URL(), b.URL()} {
			if got := get(t, fmt.Sprintf("%s/api/reports/%d/pdf", d, r.ID)); !bytes.Equal(got, pdfs[0]) {
				t.Errorf("%s: the cached PDF without the original: %d bytes", d, len(got))
			}
		}
		if _, err := c.bucket.Put(ctx, origKey, bytes.NewReader(content), blob.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		// The conversion's copy of the original is gone from both.
		for _, dir := range []string{dirA, dirB} {
			if left, _ := filepath.Glob(filepath.Join(dir, "tmp", "engine-*")); len(left) != 0 {
				t.Errorf("engine copies left: %v", left)
			}
		}
	})

	t.Run("a request that gives up leaves the conversion to finish", func(t *testing.T) {
		content := htmlReport("abandoned", 300)
		r, err := upload(b.URL(), p.ID, "abandoned.html", content)
		if err != nil {
			t.Fatal(err)
		}
		want++
		misses := func() float64 { return counter(t, b, "reportd_pdf_shared_cache_total", `result="miss"`) }
		before := misses()
		reqCtx, cancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(reqCtx, http.MethodGet, fmt.Sprintf("%s/api/reports/%d/pdf", b.URL(), r.ID), nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		eventually(t, "the request missed the shared cache", func() bool { return misses() > before })
		cancel()
		<-done
		dir := "pdf/" + sha(content)[:2] + "/" + sha(content) + "/"
		eventually(t, "the abandoned conversion's PDF in the bucket", func() bool { return len(c.keys(dir)) == 1 })
		// The PDF is written after the engines returned and the copy of
		// the original was removed: none is left, at once.
		if left, _ := filepath.Glob(filepath.Join(dirB, "tmp", "engine-*")); len(left) != 0 {
			t.Errorf("engine copies left after the conversion ended: %v", left)
		}
	})

	t.Run("SIGKILL mid-upload leaves nothing", func(t *testing.T) {
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		ct, head := uploadBody(p.ID, "killed.html", nil)
		// The multipart body without its end: the file part stays open.
		open := bytes.TrimSuffix(head.Bytes(), []byte("\r\n--"+strings.TrimPrefix(ct, "multipart/form-data; boundary=")+"--\r\n"))
		go func() {
			resp, err := client.Post(b.URL()+"/api/reports", ct, pr)
			if err == nil {
				resp.Body.Close()
				err = fmt.Errorf("the upload was answered: %s", resp.Status)
			}
			done <- err
		}()
		if _, err := pw.Write(open); err != nil {
			t.Fatal(err)
		}
		// A slow body that never ends, until the daemon is staging it.
		go func() {
			chunk := bytes.Repeat([]byte("<p>slow</p>"), 4<<10)
			for {
				if _, err := pw.Write(chunk); err != nil {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		eventually(t, "the killed replica staging the upload", func() bool {
			staged, _ := os.ReadDir(filepath.Join(dirB, "tmp"))
			for _, e := range staged {
				if fi, err := e.Info(); err == nil && fi.Size() > 0 {
					return true
				}
			}
			return false
		})
		b.Kill()
		pw.CloseWithError(io.ErrUnexpectedEOF)
		if err := <-done; err == nil {
			t.Fatal("no error from the killed replica")
		}
		got := projectsOf(t, a.URL())[p.ID]
		if got.ReportCount != want || got.TodayNewReports != want {
			t.Errorf("after the kill: reportCount %d, todayNewReports %d, want %d", got.ReportCount, got.TodayNewReports, want)
		}
		if n := len(c.keys("reports/")); n != want {
			t.Errorf("%d objects under reports/ after the kill, want %d (one per row)", n, want)
		}
	})

	// A replica killed while it writes an upload into the bucket (the body
	// fully received, its parts going up) leaves an open multipart upload
	// and no visible object; the sweep below aborts it.
	killedUploads := 0
	t.Run("SIGKILL during the bucket write leaves no object", func(t *testing.T) {
		k := c.start("", "REPORTD_S3_PART_SIZE=5MiB", "REPORTD_MAX_UPLOAD_BYTES=200MiB")
		big := bytes.Repeat([]byte("<p>a large report, sent whole, written to the bucket in parts</p>\n"), (96<<20)/66)
		done := make(chan error, 1)
		go func() {
			_, err := upload(k.URL(), p.ID, "large.html", big)
			done <- err
		}()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if ups, err := c.bucket.Uploads(ctx); err == nil && len(ups) > 0 {
				break
			}
			select {
			case err := <-done:
				t.Fatalf("the upload ended before its bucket write was seen: %v", err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("no multipart upload in the bucket within 2 minutes")
			}
			time.Sleep(2 * time.Millisecond)
		}
		k.Kill()
		if err := <-done; err == nil {
			t.Fatal("the killed replica answered the upload")
		}
		got := projectsOf(t, a.URL())[p.ID]
		if got.ReportCount != want {
			t.Errorf("after the kill: reportCount %d, want %d", got.ReportCount, want)
		}
		if n := len(c.keys("reports/")); n != want {
			t.Errorf("%d objects under reports/ after the kill, want %d (one per row)", n, want)
		}
		ups, err := c.bucket.Uploads(ctx)
		if err != nil || len(ups) == 0 {
			t.Fatalf("no open multipart upload left by the kill: %v %v", ups, err)
		}
		killedUploads = len(ups)
	})

	t.Run("the sweep removes what a crash leaves", func(t *testing.T) {
		// What a replica killed between its PUT and its commit leaves, and
		// one killed in the middle of a multipart PUT.
		orphans := []string{"reports/999999.html", "covers/999999/logo.png",
			"pdf/00/" + strings.Repeat("0", 64) + "/gone.pdf"}
		for _, k := range orphans {
			if _, err := c.bucket.Put(ctx, k, strings.NewReader("orphan"), blob.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		core := minio.Core{Client: c.bucket.Client()}
		if _, err := core.NewMultipartUpload(ctx, c.bucketName, prefix+"reports/999998.html", minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		if ups, err := c.bucket.Uploads(ctx); err != nil || len(ups) == 0 {
			t.Fatalf("planted upload not listed: %v %v", ups, err)
		}
		// A live site, and what an ingest whose row never committed leaves:
		// a manifest no row owns and the content object only it names.
		live, err := upload(px, p.ID, "site.zip", siteZip(t, map[string]string{"index.html": "<h1>live site</h1>", "app.js": "console.log(1)"}))
		if err != nil {
			t.Fatal(err)
		}
		want++
		ghost := []byte("<h1>a site whose row never committed</h1>")
		ghostKey := "cas/" + sha(ghost)[:2] + "/" + sha(ghost)
		manifest := fmt.Sprintf(`{"version":1,"entry":"index.html","totalBytes":%d,"files":[{"path":"index.html","sha256":%q,"size":%d,"contentType":"text/html; charset=utf-8"}]}`,
			len(ghost), sha(ghost), len(ghost))
		for k, v := range map[string]string{ghostKey: string(ghost), "sites/999997.json": manifest} {
			if _, err := c.bucket.Put(ctx, k, strings.NewReader(v), blob.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		orphans = append(orphans, ghostKey, "sites/999997.json")
		before := c.keys("")
		// The survivor, restarted with no grace, sweeps soon after start
		// (and converts on upload, for the next step).
		a.Stop()
		a = c.start(dirA, "REPORTD_SWEEP_GRACE=0s", "REPORTD_SITES_GC_GRACE=0s", "REPORTD_CONVERT_ON_UPLOAD=true")
		eventually(t, "the sweep removed the orphans", func() bool {
			left := c.keys("")
			ups, err := c.bucket.Uploads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range orphans {
				if _, ok := left[k]; ok {
					return false
				}
			}
			return len(ups) == 0
		})
		after := c.keys("")
		for k := range before {
			if _, ok := after[k]; !ok && !slices.Contains(orphans, k) {
				t.Errorf("the sweep removed %s, which a row references", k)
			}
		}
		if n := counter(t, a, "reportd_bucket_sweep_removed_total", `kind="report"`); n != 1 {
			t.Errorf("sweep counted %v report objects, want 1", n)
		}
		if n := counter(t, a, "reportd_bucket_sweep_removed_total", `kind="upload"`); n != float64(1+killedUploads) {
			t.Errorf("sweep counted %v aborted uploads, want %d (the planted one and the killed replica's)", n, 1+killedUploads)
		}
		if len(c.keys(pdfDir)) != 1 {
			t.Error("the sweep removed the PDF of a live report")
		}
		if _, ok := after["sites/"+strconv.FormatInt(live.ID, 10)+".json"]; !ok {
			t.Error("the sweep removed the manifest of a live site")
		}
		// The killed replica's staged upload goes at its restart.
		b = c.start(dirB)
		if left, _ := os.ReadDir(filepath.Join(dirB, "tmp")); len(left) != 0 {
			t.Errorf("tmp/ of the killed replica after restart: %v", left)
		}
		got := projectsOf(t, b.URL())[p.ID]
		if got.ReportCount != want {
			t.Errorf("reportCount %d after the restarts, want %d", got.ReportCount, want)
		}
	})

	t.Run("convert_on_upload converts into the bucket", func(t *testing.T) {
		content := htmlReport("converted on upload", 100)
		if _, err := upload(a.URL(), p.ID, "on-upload.html", content); err != nil {
			t.Fatal(err)
		}
		dir := "pdf/" + sha(content)[:2] + "/" + sha(content) + "/"
		eventually(t, "the PDF of an upload in the bucket", func() bool { return len(c.keys(dir)) == 1 })

		// A site's entry page too: into the bucket, keyed by its manifest.
		r, err := upload(a.URL(), p.ID, "on-upload-site.zip", siteZip(t, map[string]string{"index.html": "<h1>site converted on upload</h1>"}))
		if err != nil {
			t.Fatal(err)
		}
		o, err := c.bucket.Open(ctx, fmt.Sprintf("sites/%d.json", r.ID))
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := io.ReadAll(o)
		o.Close()
		if err != nil {
			t.Fatal(err)
		}
		dir = "pdf/" + sha(manifest)[:2] + "/" + sha(manifest) + "/"
		eventually(t, "the PDF of a site upload in the bucket", func() bool { return len(c.keys(dir)) == 1 })
	})
}

// siteZip is a zip archive of files (name -> content).
func siteZip(t *testing.T, files map[string]string) []byte {
	return testfixture.Zip(t, "", files)
}
