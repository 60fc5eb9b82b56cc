package detect_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/report"
)

// TestSiteFS: a site in an fs.FS, files in folders (Allure 2's
// widgets/summary.json) and a real JaCoCo page, is found by its walk; a
// file that cannot be opened counts as not there.
func TestSiteFS(t *testing.T) {
	jacoco, err := os.ReadFile(filepath.Join("testdata", "jacoco-index.html"))
	if err != nil {
		t.Fatal(err)
	}
	allure := fstest.MapFS{
		"index.html":           {Data: []byte(`<!DOCTYPE html><html><head><title>Allure Report</title></head><body><div id="alert"></div><div id="content"></div><script src="app.js"></script></body></html>`)},
		"app.js":               {},
		"widgets/summary.json": {Data: []byte(`{"reportName":"Allure Report","testRuns":[],"statistic":{"failed":2,"broken":1,"skipped":3,"passed":10,"unknown":0,"total":16},"time":{}}`)},
	}
	gen, sum, _ := detect.SiteFS(allure)
	if gen != detect.Allure || sum == nil {
		t.Fatalf("allure 2: %q %+v", gen, sum)
	}
	same(t, sum, report.Summary{Passed: ptr[int64](10), Failed: ptr[int64](3), Skipped: ptr[int64](3)})

	jc := fstest.MapFS{"index.html": {Data: jacoco}, "jacoco-resources/report.css": {Data: []byte("td{}")},
		"com.example/index.html": {Data: []byte("<html></html>")}}
	gen, sum, _ = detect.SiteFS(jc)
	if gen != detect.JaCoCo {
		t.Fatalf("jacoco: %q", gen)
	}
	same(t, sum, report.Summary{Lines: ptr(87.5)})

	if gen, sum, res := detect.SiteFS(unopenable{jc}); gen != "" || sum != nil || res != nil {
		t.Errorf("unreadable: %q %+v %+v", gen, sum, res)
	}
}

// unopenable lists its files but opens none of them.
type unopenable struct{ fstest.MapFS }

func (u unopenable) Open(name string) (fs.File, error) {
	f, err := u.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return f, nil
	}
	f.Close()
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
}
