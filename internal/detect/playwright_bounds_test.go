package detect

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"testing"
)

// endless is a reader of base64 text that never ends; n counts what was read.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'A'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestPlaywrightDataIsBounded: an embedded report that never ends is read
// up to PlaywrightLimit, then given up, not read on.
func TestPlaywrightDataIsBounded(t *testing.T) {
	src := &endless{}
	page := io.MultiReader(strings.NewReader(`<template id="playwrightReportBase64">`+pwDataURL), src)
	if s, err := playwrightStats(page); err == nil {
		t.Fatalf("endless data gave %+v", s)
	}
	if src.n > PlaywrightLimit+64<<10 {
		t.Errorf("read %d bytes of the data, bound %d", src.n, PlaywrightLimit)
	}
}

// TestPlaywrightReportJSONIsBounded: a report.json that inflates past
// pwReportJSONSize before its stats gives no figures (the zip is a few
// hundred kilobytes; what it inflates to is not held).
func TestPlaywrightReportJSONIsBounded(t *testing.T) {
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.Create("report.json")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(`{"files":"`))
	pad := bytes.Repeat([]byte("x"), 1<<20)
	for range pwReportJSONSize>>20 + 1 {
		w.Write(pad)
	}
	w.Write([]byte(`","stats":{"expected":1,"unexpected":0,"flaky":0,"skipped":0}}`))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	page := `<template id="playwrightReportBase64">` + pwDataURL + base64.StdEncoding.EncodeToString(zb.Bytes()) + `</template>`
	if s, err := playwrightStats(strings.NewReader(page)); err == nil {
		t.Fatalf("stats past the bound read: %+v", s)
	}
}

// TestPlaywrightCountsDoNotOverflow: counts whose sum does not fit give
// no figures, not a negative Passed.
func TestPlaywrightCountsDoNotOverflow(t *testing.T) {
	page := pwPage(t, `{"stats":{"expected":9223372036854775807,"unexpected":0,"flaky":1,"skipped":0}}`)
	if s, err := playwrightStats(bytes.NewReader(page)); err == nil {
		t.Fatalf("overflowing counts gave %+v (passed %d)", s, *s.Passed)
	}
}
