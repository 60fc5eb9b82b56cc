package detect

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Playwright's HTML reporter (@playwright/test, packages/playwright/src/
// reporters/html.ts) writes index.html: its app (about 500 KB of script
// and style), then the report as a base64 zip,
//
//	<template id="playwrightReportBase64">data:application/zip;base64,UEsDB…</template>
//
// (before 1.4x: <script>window.playwrightReportBase64 = "data:application/zip;base64,…";</script>).
// The zip holds report.json, whose "stats" are the run's counts:
//
//	"stats":{"total":5,"expected":2,"unexpected":1,"flaky":1,"skipped":1,"ok":false}
//
// expected = passed at the first try, unexpected = failed (after every
// retry), flaky = failed, then passed on a retry.
const (
	pwMarker  = "playwrightReportBase64"
	pwDataURL = "data:application/zip;base64,"
	// pwNear is how close before the data URL the marker must be.
	pwNear = 64
)

// Bounds of what reading a Playwright report may take: the base64 text
// (the zip holds every test's steps and errors, so it grows with the
// run), and report.json inside it.
const (
	PlaywrightLimit  = 64 << 20
	pwReportJSONSize = 16 << 20
)

var errNotPlaywright = errors.New("no Playwright report data")

func isPlaywright(t string) bool {
	return pwDataIndex(t) >= 0
}

// pwDataIndex is where the report's base64 starts in t, or -1.
func pwDataIndex(t string) int {
	for off := 0; ; {
		i := strings.Index(t[off:], pwDataURL)
		if i < 0 {
			return -1
		}
		i += off
		if strings.Contains(t[max(0, i-pwNear):i], pwMarker) {
			return i + len(pwDataURL)
		}
		off = i + len(pwDataURL)
	}
}

func playwright(t string) *report.Summary {
	s, err := playwrightStats(strings.NewReader(t))
	if err != nil {
		return nil
	}
	return s
}

// playwrightStats reads a Playwright index.html from r, streaming: it
// looks for the embedded report, decodes at most PlaywrightLimit bytes of
// it and reads report.json's stats. Passed counts flaky tests (they
// passed in the end); Flaky gives them on their own too.
func playwrightStats(r io.Reader) (*report.Summary, error) {
	data, err := skipToPlaywrightData(r)
	if err != nil {
		return nil, err
	}
	var zb bytes.Buffer
	dec := base64.NewDecoder(base64.StdEncoding, io.LimitReader(&base64Run{r: data}, PlaywrightLimit))
	if _, err := io.Copy(&zb, dec); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(zb.Bytes()), int64(zb.Len()))
	if err != nil {
		return nil, err
	}
	for _, f := range zr.File {
		if f.Name != "report.json" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		var st struct {
			Expected, Unexpected, Flaky, Skipped *int64
		}
		if err := jsonField(io.LimitReader(rc, pwReportJSONSize), "stats", &st); err != nil {
			return nil, err
		}
		if st.Expected == nil || st.Unexpected == nil || st.Flaky == nil || st.Skipped == nil ||
			*st.Expected < 0 || *st.Unexpected < 0 || *st.Flaky < 0 || *st.Skipped < 0 {
			return nil, errNotPlaywright
		}
		passed := *st.Expected + *st.Flaky
		if passed < 0 { // the sum does not fit
			return nil, errNotPlaywright
		}
		return &report.Summary{Passed: &passed, Failed: st.Unexpected, Skipped: st.Skipped, Flaky: st.Flaky}, nil
	}
	return nil, errNotPlaywright
}

// skipToPlaywrightData reads r up to the first byte of the report's
// base64 (a data URL closely after the marker), holding only a small
// window, and returns the reader from there on.
func skipToPlaywrightData(r io.Reader) (io.Reader, error) {
	keep := pwNear + len(pwDataURL)
	var win []byte
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		win = append(win, chunk[:n]...)
		if i := pwDataIndex(string(win)); i >= 0 {
			return io.MultiReader(bytes.NewReader(win[i:]), r), nil
		}
		if err == io.EOF {
			return nil, errNotPlaywright
		}
		if err != nil {
			return nil, err
		}
		if len(win) > keep {
			win = append([]byte(nil), win[len(win)-keep:]...)
		}
	}
}

// base64Run reads r up to its first byte outside the standard base64
// alphabet (the end of the data URL).
type base64Run struct {
	r    io.Reader
	done bool
}

func (b *base64Run) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	for i, c := range p[:n] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			b.done = true
			return i, nil
		}
	}
	return n, err
}

// jsonField decodes the value of key in the JSON object read from r into
// v, streaming past the other members without holding them.
func jsonField(r io.Reader, key string, v any) error {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if k, _ := t.(string); k == key {
			return dec.Decode(v)
		}
		if err := skipJSON(dec); err != nil {
			return err
		}
	}
	return errors.New("no " + key + " in the JSON object")
}

// skipJSON reads one value from dec token by token.
func skipJSON(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
