package chromium

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
)

// A page of a site is printed once it is ready: loaded, its fonts loaded,
// its scripts done drawing (quiet.js), no request of the site in flight
// for siteQuietWindow (siteQuietStatic for a page that asked for nothing
// after its load event), the ready selector of its generator present (when
// known), and the request's own waitForSelector/waitForExpression met.

// siteQuietWindow is how long no request of the site may be in flight
// before a page that asked for files after its load event counts as done
// loading its data; siteQuietStatic is that wait for a page that asked for
// nothing since (a static page: coverage.py's, istanbul's), whose scripts
// have settled already. A 42-page coverage.py site printed in 23.4 s with
// the full window on every page, in 8.0 s with this rule (load ~10).
const (
	siteQuietWindow = 500 * time.Millisecond
	siteQuietStatic = 100 * time.Millisecond
)

// readySelectorWait bounds the wait for a generator's ready selector: a page
// of the generator that never shows it (an empty report, another page kind)
// is printed as it is after this, not failed.
const readySelectorWait = 10 * time.Second

// readySelectors are CSS selectors that match once a generator's page has
// drawn what it is about, by report.Report.Generator. A generator missing
// here has none: its pages are printed once loaded and quiet. Each selector
// matches every page kind of its generator that draws itself.
var readySelectors = map[string]string{
	// Static pages; the index table or the source listing is there at load.
	"coverage.py": "main#index table.index, main#source, #index table.index, #source",
	// The HTML reporter draws its list of tests from embedded data.
	"playwright": ".test-file-test, .test-case-column, .chip",
	// Allure 2 (side navigation) and Allure 3 (the app root gets children).
	"allure": ".side-nav, #app > *",
	// mochawesome-report-generator mounts its React app in #report.
	"mochawesome": "#report > *",
	// Go's cover tool: static, its panes are there at load.
	"go-cover": "#files",
}

// readySelector returns the ready selector of generator, "" for none.
func readySelector(generator string) string {
	return readySelectors[strings.ToLower(strings.TrimSpace(generator))]
}

// titleJS is the page's title for its bookmark.
const titleJS = `document.title.trim()`

// linksJS lists the page's in-site links in document order: a[href] on the
// page's own origin, without fragment or query, as URL paths (still
// percent-encoded). The Go side keeps .html pages and deduplicates.
const linksJS = `(() => {
  const out = [];
  for (const a of document.querySelectorAll("a[href]")) {
    let u;
    try { u = new URL(a.getAttribute("href"), document.baseURI); } catch (e) { continue; }
    if (u.origin !== location.origin) continue;
    out.push(u.pathname);
  }
  return out;
})()`

// A multi-part page shows one part at a time behind a selector; printed as
// it is, its PDF would hold only the part shown. partHooks lists the kinds
// known here: how to find one, list its parts, and show one part. With
// scope=site each part is printed on its own, under a bookmark of its own;
// the entry print shows all parts at once (chromium_panes.go).
type partHook struct {
	name string
	// list evaluates to [] on other pages, else [{id, title}] in order.
	list string
	// show returns the expression that shows only the part with id.
	show func(id string) string
}

var partHooks = []partHook{{
	// go tool cover -html: <select id="files"> whose options' values are
	// the ids of <pre class="file"> elements, one shown at a time.
	name: "go-cover",
	list: `(() => {
  const sel = document.getElementById("files");
  if (!sel || !document.querySelector("pre.file")) return [];
  return Array.from(sel.options)
    .filter(o => { const p = document.getElementById(o.value); return p && p.classList.contains("file"); })
    .map(o => ({id: o.value, title: o.textContent.trim()}));
})()`,
	show: func(id string) string {
		q, _ := json.Marshal(id)
		return `(() => {
  const id = ` + string(q) + `;
  for (const p of document.querySelectorAll("pre.file")) p.style.display = p.id === id ? "block" : "none";
  const sel = document.getElementById("files");
  if (sel) sel.value = id;
  if (!document.getElementById("reportd-part-style")) {
    const st = document.createElement("style");
    st.id = "reportd-part-style";
    st.textContent = "#topbar{position:static!important;height:auto!important;overflow:hidden}" +
      "#content{margin-top:0!important}pre.file{white-space:pre-wrap;overflow-wrap:anywhere}";
    document.head.appendChild(st);
  }
  return true;
})()`
	},
}}

// siteScripts are the scripts above, for the cache key (variantOf).
func siteScripts() string {
	var b strings.Builder
	b.WriteString(titleJS + linksJS)
	for _, h := range partHooks {
		b.WriteString(h.name + h.list + h.show("x"))
	}
	for _, g := range slices.Sorted(maps.Keys(readySelectors)) {
		b.WriteString(g + "=" + readySelectors[g] + ";")
	}
	return b.String()
}
