package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

func stdJSON(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var jsonStrings = []string{
	"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "tab\tnew\nline\rcr\bbs\fff",
	"\x00\x01\x1f\x7f", "季度报告 2026.pdf", "emoji 📊", "\u2028\u2029", "bad \xff\xfe utf8", "\xe2\x82", "é",
}

var summaries = func() []*report.Summary {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	return []*report.Summary{
		{Lines: f(87.5), Passed: n(3), Failed: n(0), Skipped: n(1)},
		{Passed: n(4), Failed: n(2), Skipped: n(1), Flaky: n(1)}, {Passed: n(7), Flaky: n(0)}, {Flaky: n(2)}, {Lines: f(1e-9), Flaky: n(5)},
		{Lines: f(0)}, {Lines: f(100)}, {Lines: f(33.333333333333336)}, {Passed: n(1 << 40)}, {Lines: f(1e-9)}, {},
	}
}()

// The hand-written bodies must be byte for byte what encoding/json writes;
// a field added to report.Project or report.Report shows up here first.
func TestFastJSONMatchesEncodingJSON(t *testing.T) {
	at := report.LocalTime{Time: time.Date(2026, 3, 10, 9, 8, 7, 0, time.FixedZone("X", 8*3600))}
	var values []any
	values = append(values, report.Project{}, report.Report{}, []report.Project(nil), []report.Report(nil), []report.Project{}, []report.Report{})
	var ps []report.Project
	var rs []report.Report
	for i, s := range jsonStrings {
		s2 := s + "!"
		p := report.Project{ID: int64(i + 1), Name: s, CreatedAt: at, ReportCount: int64(i * 1000), TodayNewReports: -1}
		if i%2 == 0 {
			p.Description, p.CoverImage = &s2, &s
		}
		switch n, yes := i*7, i%4 == 1; i % 3 {
		case 1:
			p.Retention = &report.Retention{KeepLast: &n, KeepNewestPerBranch: &yes}
		case 2:
			p.Retention = &report.Retention{MaxAgeDays: &n}
		}
		r := report.Report{ID: int64(1 << (i * 4)), ProjectID: 3, FileName: s, FileType: report.FileType(s), FilePath: s2, UploadTime: at}
		if i%3 == 0 {
			r.FileContent = &s
		}
		if i%3 == 1 {
			r.FileContentOmitted, r.FileContentSize = true, int64(i)<<30
		}
		if i%4 == 2 {
			r.Generator = s
		}
		if i%4 < len(summaries) {
			r.Summary = summaries[i%4]
		}
		ps, rs = append(ps, p), append(rs, r)
		values = append(values, p, r)
	}
	for _, sm := range summaries {
		values = append(values, report.Report{ID: 1, UploadTime: at, Generator: "coverage.py", Summary: sm})
	}
	values = append(values, ps, rs)
	for _, v := range values {
		got, ok := appendAPIJSON(nil, v)
		if want := stdJSON(t, v); !ok || !bytes.Equal(got, want) {
			t.Errorf("%T:\n got %s\nwant %s", v, got, want)
		}
	}
	if _, ok := appendAPIJSON(nil, ErrorBody{}); ok {
		t.Error("other types must fall back to encoding/json")
	}
}

func FuzzJSONString(f *testing.F) {
	for _, s := range jsonStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, s), stdJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
