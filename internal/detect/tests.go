package detect

import (
	"encoding/json"
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// mochawesome-report-generator (marge) renders, in src/lib/main-html.js,
//
//	<body data-raw="${e(data)}" data-config="…"><div id="report"></div>…
//
// where data is JSON.stringify of mochawesome's output, HTML-escaped
// (escape-html: &quot; &amp; &#39; &lt; &gt;), and starts with
//
//	{"stats":{"suites":1,"tests":3,"passes":2,"pending":0,"failures":1,…,"skipped":0,…},"results":[…]
const dataRaw = `<body data-raw="`

func isMochawesome(t string) bool {
	i := strings.Index(t, dataRaw)
	return i >= 0 && strings.HasPrefix(t[i+len(dataRaw):], "{&quot;stats&quot;:")
}

func mochawesome(t string) *report.Summary {
	raw := t[strings.Index(t, dataRaw)+len(dataRaw):]
	// The stats come first and are small; the rest may be megabytes.
	if end := strings.IndexByte(raw, '"'); end >= 0 {
		raw = raw[:end]
	}
	if len(raw) > 64<<10 {
		raw = raw[:64<<10]
	}
	data := html.UnescapeString(raw)
	dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(data, `{"stats":`)))
	var st struct {
		Passes, Failures, Pending, Skipped *int64
	}
	if err := dec.Decode(&st); err != nil || st.Passes == nil || st.Failures == nil || *st.Passes < 0 || *st.Failures < 0 ||
		deref(st.Pending) < 0 || deref(st.Skipped) < 0 {
		return nil
	}
	s := &report.Summary{Passed: st.Passes, Failed: st.Failures}
	if st.Pending != nil || st.Skipped != nil {
		n := deref(st.Pending) + deref(st.Skipped)
		s.Skipped = &n
	}
	return s
}

// pytest-html (src/pytest_html/resources/index.jinja2, v4) writes one
// filter per outcome in the summary,
//
//	<span class="passed">3 Passed,</span>
//	<span class="failed">1 Failed,</span>
//	<span class="skipped">0 Skipped,</span>  (also xfailed, xpassed, error, rerun)
//
// (v3: "3 passed"), and "Report generated on … by <a href="https://pypi.python.org/pypi/pytest-html">pytest-html</a>".
// Passed counts passed and xpassed, Failed failed and error, Skipped
// skipped and xfailed.
var pytestOutcome = regexp.MustCompile(`<span class="(passed|failed|skipped|error|xfailed|xpassed)">\s*([0-9]+) `)

func isPytestHTML(t string) bool {
	return strings.Contains(t, "pypi/pytest-html")
}

func pytestHTML(t string) *report.Summary {
	n := map[string]int64{}
	seen := map[string]bool{}
	for _, m := range pytestOutcome.FindAllStringSubmatch(t, -1) {
		if seen[m[1]] { // the summary comes first; later spans are test rows
			continue
		}
		seen[m[1]] = true
		v, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			return nil
		}
		n[m[1]] = v
	}
	if !seen["passed"] || !seen["failed"] {
		return nil
	}
	passed, failed, skipped := n["passed"]+n["xpassed"], n["failed"]+n["error"], n["skipped"]+n["xfailed"]
	return &report.Summary{Passed: &passed, Failed: &failed, Skipped: &skipped}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
