package detect

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// pwPage is a Playwright-shaped page around a zip holding report.json.
func pwPage(t testing.TB, reportJSON string) []byte {
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.Create("report.json")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(reportJSON))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(`<html><body><div id='root'></div></body></html>` + "\n" + `<template id="playwrightReportBase64">` + pwDataURL +
		base64.StdEncoding.EncodeToString(zb.Bytes()) + `</template>`)
}

// FuzzPlaywright: any page gives either nothing or counts that are all
// known and not negative, and never panics.
func FuzzPlaywright(f *testing.F) {
	f.Add(pwPage(f, `{"files":[],"stats":{"total":3,"expected":1,"unexpected":1,"flaky":0,"skipped":1,"ok":false}}`))
	f.Add(pwPage(f, `{"stats":{"expected":-1,"unexpected":1,"flaky":0,"skipped":1}}`))
	f.Add(pwPage(f, `{"stats":[1,2]}`))
	f.Add(pwPage(f, `{"stats":{"expected":9223372036854775807,"unexpected":0,"flaky":1,"skipped":0}}`))
	f.Add(pwPage(f, `[]`))
	f.Add([]byte(`<template id="playwrightReportBase64">` + pwDataURL + `UEsDBBQAAAgI`))
	f.Fuzz(func(t *testing.T, page []byte) {
		s, err := playwrightStats(bytes.NewReader(page))
		if err != nil {
			return
		}
		if s == nil {
			t.Fatal("no summary and no error")
		}
		flaky := s.Flaky
		if flaky == nil || s.Passed == nil || s.Failed == nil || s.Skipped == nil ||
			*s.Passed < *flaky || *s.Failed < 0 || *s.Skipped < 0 || *flaky < 0 {
			t.Fatalf("%+v flaky %v", s, flaky)
		}
	})
}

// FuzzProfile: a coverage profile gives nothing or a total in 0–100.
func FuzzProfile(f *testing.F) {
	f.Add("mode: set\nexample.com/a/a.go:3.24,3.40 1 1\nexample.com/a/a.go:5.24,7.2 2 0\n")
	f.Add("mode: count\nx.go:1.1,2.2 3 5\nmode: count\nx.go:1.1,2.2 3 0\n")
	f.Add("mode: atomic\nx.go:1.1,2.2 -3 5\n")
	f.Add("mode: set\n")
	f.Add("mode: set\nx.go:1.1,2.2 9223372036854775807 1\nx.go:3.1,4.2 9223372036854775807 0\n")
	f.Fuzz(func(t *testing.T, p string) {
		total, files := profileTotal(strings.NewReader(p))
		if total != nil && (*total < 0 || *total > 100 || len(files) == 0) {
			t.Fatalf("total %v files %v", *total, files)
		}
	})
}
