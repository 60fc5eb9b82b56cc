package detect

import (
	"encoding/json"
	"io"
	"path"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// Allure report sites: an app (index.html + scripts) that fetches its
// data as JSON files, so the figures come from those files.
//
// Allure 3 (npm "allure", `allure generate`; the default Awesome plugin)
// writes summary.json beside index.html (a report made with several
// plugins has one folder per plugin, e.g. awesome/summary.json):
//
//	{"stats":{"total":5,"failed":1,"broken":1,"skipped":1,"passed":2,"unknown":0,"retries":2},
//	 "status":"failed","flakyTests":[…],"retryTests":[…],"name":"Allure Report","plugin":"Awesome",…}
//
// Allure 2 writes widgets/summary.json:
//
//	{"reportName":"Allure Report","statistic":{"failed":1,"broken":1,"skipped":1,"passed":2,"unknown":0,"total":5},…}
//
// Passed is passed, Failed is failed + broken (a broken test ended in an
// error other than a failed assertion), Skipped is skipped; unknown is in
// none. Retries of a test are not counted again (Allure reports the last
// run). Flaky is the length of Allure 3's list of tests it marked flaky
// (from history: a test whose status flipped in recent runs); they are
// counted by their status, so in Passed or Failed.
const allureJSONLimit = 4 << 20

type allureCounts struct {
	Passed, Failed, Broken, Skipped *int64
}

func (c allureCounts) summary() *report.Summary {
	if c.Passed == nil && c.Failed == nil && c.Broken == nil && c.Skipped == nil {
		return nil
	}
	for _, p := range []*int64{c.Passed, c.Failed, c.Broken, c.Skipped} {
		if p != nil && *p < 0 {
			return nil
		}
	}
	passed, failed, skipped := deref(c.Passed), deref(c.Failed)+deref(c.Broken), deref(c.Skipped)
	return &report.Summary{Passed: &passed, Failed: &failed, Skipped: &skipped}
}

// allure3Summary reads an Allure 3 summary.json; ok is false when it is
// not one (stats, and a plugin that made it).
func allure3Summary(r io.Reader) (s *report.Summary, ok bool) {
	var v struct {
		Stats      *allureCounts
		FlakyTests []json.RawMessage
		Plugin     *string
		PluginID   *string `json:"pluginId"`
	}
	if err := json.NewDecoder(io.LimitReader(r, allureJSONLimit)).Decode(&v); err != nil || v.Stats == nil || (v.Plugin == nil && v.PluginID == nil) {
		return nil, false
	}
	s = v.Stats.summary()
	if s == nil {
		return nil, false
	}
	if v.FlakyTests != nil {
		n := int64(len(v.FlakyTests))
		s.Flaky = &n
	}
	return s, true
}

// allure2Summary reads an Allure 2 widgets/summary.json.
func allure2Summary(r io.Reader) (*report.Summary, bool) {
	var v struct {
		ReportName *string
		Statistic  *allureCounts
	}
	if err := json.NewDecoder(io.LimitReader(r, allureJSONLimit)).Decode(&v); err != nil || v.Statistic == nil || v.ReportName == nil {
		return nil, false
	}
	s := v.Statistic.summary()
	return s, s != nil
}

// isAllureApp tells whether an index.html is Allure's app: Allure 3
// defines window.allure and its loader, Allure 2 loads app.js under the
// title "Allure Report".
func isAllureApp(t string) bool {
	return strings.Contains(t, "window.allure") || strings.Contains(t, "allure-app-loader") ||
		(strings.Contains(t, "Allure Report") && strings.Contains(t, "app.js"))
}

// allureSummaryFiles are the site's candidate summary files, Allure 3's
// first: summary.json at the root or one folder down (one per plugin),
// then Allure 2's widgets/summary.json.
func allureSummaryFiles(has map[string]bool, files []string) (v3 []string, v2 string) {
	if has["summary.json"] {
		v3 = append(v3, "summary.json")
	}
	for _, f := range files {
		if dir, base := path.Split(f); base == "summary.json" && strings.Count(f, "/") == 1 && dir != "widgets/" {
			v3 = append(v3, f)
		}
	}
	if has["widgets/summary.json"] {
		v2 = "widgets/summary.json"
	}
	return v3, v2
}
