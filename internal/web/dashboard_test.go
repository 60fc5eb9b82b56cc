package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDashboard walks through what a user does, in one browser tab, and
// checks what the page shows after every step.
func TestDashboard(t *testing.T) {
	d := startDaemon(t, "dashboard: true\n")
	b := startBrowser(t)

	t.Log("empty state")
	b.do(chromedp.Navigate(d.base + "/"))
	b.waitText("main", "No projects yet")
	if got := eval[string](b, `document.title`); got != "Projects · reportd" {
		t.Errorf("title %q", got)
	}

	t.Log("create dialog: keyboard, Escape and focus return")
	b.do(chromedp.Focus(chromedp.CSS("#new-project")), chromedp.KeyEvent("\r"))
	b.waitFor("create dialog", `document.querySelector('dialog[open]') !== null`, 10*time.Second)
	if got := eval[string](b, `document.activeElement.name`); got != "name" {
		t.Errorf("focus in the create dialog is on %q, want the name field", got)
	}
	b.do(chromedp.KeyEvent("\x1b")) // Escape
	b.waitFor("dialog closed", `document.querySelector('dialog') === null`, 10*time.Second)
	if got := eval[string](b, `document.activeElement.id`); got != "new-project" {
		t.Errorf("after Escape focus is on %q, want #new-project", got)
	}

	t.Log("create a project with a cover")
	b.click("#new-project")
	b.waitFor("create dialog", `document.querySelector('dialog[open] input[name=name]') !== null`, 10*time.Second)
	b.click("dialog[open] button[type=submit]")
	b.waitText("dialog[open] .dialog-error", "A project needs a name.")
	b.do(
		chromedp.SendKeys(chromedp.CSS("dialog[open] input[name=name]"), "Payments service"),
		chromedp.SendKeys(chromedp.CSS("dialog[open] textarea[name=description]"), "Nightly test runs, load tests and release reviews of the payments API."),
		chromedp.SetUploadFiles(chromedp.CSS("dialog[open] input[name=coverFile]"), []string{fixture(t, "cover.png")}),
	)
	b.waitFor("cover preview", `!document.querySelector('dialog[open] .cover-preview').hidden`, 10*time.Second)
	b.screenshot("create-project.png")
	checkContrast(t, b, "create dialog with an error")
	b.click("dialog[open] button[type=submit]")
	b.waitFor("project page", `/^#\/projects\/\d+$/.test(location.hash) && document.querySelector('h1')?.textContent === 'Payments service'`, 30*time.Second)
	projectID := strings.TrimPrefix(eval[string](b, `location.hash`), "#/projects/")
	b.waitText("main", "No reports yet")
	b.waitText(".project-stats", "0 reports")
	if src := eval[string](b, `document.querySelector('img.project-cover')?.getAttribute('src') ?? ''`); !strings.HasPrefix(src, "uploads/covers/"+projectID+"/") {
		t.Errorf("project cover src %q", src)
	}
	// The image may still be loading when the page shows: wait for it.
	b.waitFor("the cover image to load from /uploads", `document.querySelector('img.project-cover')?.complete && document.querySelector('img.project-cover').naturalWidth === 320`, 15*time.Second)

	t.Log("upload by picker, with files of the wrong type")
	fake := filepath.Join(t.TempDir(), "renamed.pdf")
	if err := os.WriteFile(fake, []byte("plain text, not a PDF"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#upload-input"), []string{
		fixture(t, "nightly-tests.html"), fixture(t, "release-deck.pptx"), fixture(t, "release-deck.pdf"), fixture(t, "make-fixtures.sh"), fake,
	}))
	b.waitFor("two files refused", `document.querySelectorAll('.upload-rejected').length === 2`, 30*time.Second)
	b.waitText(".uploads", "make-fixtures.sh")
	b.waitText(".uploads", "Not sent: only .html, .md, .pdf, .ppt and .pptx files can be published.")
	b.waitText(".uploads", "Not sent: the content is not a PDF, whatever its name says.")
	b.waitFor("three uploads done", `document.querySelectorAll('.upload-done').length === 3`, 60*time.Second)

	t.Log("upload by drag and drop")
	md, err := os.ReadFile(fixture(t, "weekly-summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	eval[bool](b, fmt.Sprintf(`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File([%s], 'weekly-summary.md', { type: 'text/markdown' }));
		const zone = document.getElementById('dropzone');
		zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
		return zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
	})()`, jsString(string(md))))
	b.waitFor("four uploads done", `document.querySelectorAll('.upload-done').length === 4`, 60*time.Second)
	b.waitFor("four reports listed", `document.querySelectorAll('li.report').length === 4`, 30*time.Second)
	b.waitText(".project-stats", "4 reports")
	b.waitText(".project-stats", "+4 today")
	ids := eval[[]int](b, `[...document.querySelectorAll('li.report')].map((li) => +li.dataset.reportId)`)
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			t.Errorf("reports not newest first: ids %v", ids)
		}
	}
	names := b.text("ol.reports")
	for _, n := range []string{"nightly-tests.html", "release-deck.pptx", "release-deck.pdf", "weekly-summary.md", "Uploaded "} {
		if !strings.Contains(names, n) {
			t.Errorf("report list lacks %q:\n%s", n, names)
		}
	}
	icons := eval[[]string](b, `[...document.querySelectorAll('li.report .ficon')].map((e) => e.textContent + ':' + e.getAttribute('aria-label'))`)
	if strings.Join(icons, " ") == "" || !strings.Contains(strings.Join(icons, " "), "MD:Markdown document") {
		t.Errorf("type icons %v", icons)
	}
	reportID := func(name string) string {
		return eval[string](b, fmt.Sprintf(`[...document.querySelectorAll('li.report')].find((li) => li.querySelector('.report-name').textContent === %s)?.dataset.reportId ?? ''`, jsString(name)))
	}
	htmlID, mdID, pptxID, pdfID := reportID("nightly-tests.html"), reportID("weekly-summary.md"), reportID("release-deck.pptx"), reportID("release-deck.pdf")
	b.screenshot("upload.png")
	checkContrast(t, b, "project with uploads")
	b.colorScheme("dark")
	checkContrast(t, b, "project with uploads, dark")
	b.colorScheme("")
	b.click(".uploads-foot button") // Clear finished
	b.waitFor("upload rows cleared", `document.querySelectorAll('li.upload').length === 0`, 10*time.Second)
	b.screenshot("project.png")

	t.Log("the project list shows counts, the today badge and a filter")
	d.api(t, "POST", "/projects", map[string]any{"name": "Mobile app", "description": "Crash reports and UI test runs for iOS and Android."})
	d.api(t, "POST", "/projects", map[string]any{"name": "Data platform"})
	b.click(".crumbs a[href='#/']")
	b.waitFor("three cards", `document.querySelectorAll('li.card').length === 3`, 30*time.Second)
	card := fmt.Sprintf(`li.card[data-project-id="%s"]`, projectID)
	b.waitText(card, "4 reports")
	b.waitText(card+" .badge-today", "+4 today")
	if n := b.count(`li.card .badge-today`); n != 1 {
		t.Errorf("%d today badges, want 1 (only the project with uploads)", n)
	}
	b.screenshot("projects.png")
	checkContrast(t, b, "projects")
	b.colorScheme("dark")
	b.waitFor("dark scheme", `matchMedia('(prefers-color-scheme: dark)').matches`, 10*time.Second)
	b.screenshot("projects-dark.png")
	checkContrast(t, b, "projects, dark")
	b.colorScheme("")
	b.do(chromedp.SendKeys(chromedp.CSS("#project-filter"), "PAY"))
	b.waitFor("filtered to one", `document.querySelectorAll('li.card').length === 1`, 10*time.Second)
	b.waitText(".result-count", "1 project match")
	b.do(chromedp.SendKeys(chromedp.CSS("#project-filter"), "zzz"))
	b.waitText("main", "No matching projects")
	b.click(".state-empty button")
	b.waitFor("filter cleared", `document.querySelectorAll('li.card').length === 3`, 10*time.Second)

	t.Log("HTML reader: sandboxed preview, or the content origin where the daemon has one")
	b.click(card + " .card-link")
	b.waitFor("report list", `document.querySelectorAll('li.report').length === 4`, 30*time.Second)
	b.click(fmt.Sprintf(`li.report[data-report-id="%s"] .report-name`, htmlID))
	// A daemon with a content origin gives the report a siteUrl and the
	// reader frames that (TestSingleHTMLFromContentOrigin); without one,
	// the sandboxed preview on this origin (TestHTMLReaderWithoutContentOrigin).
	htmlFrameSel := "iframe.frame-html"
	if u, _ := d.api(t, "GET", "/reports/"+htmlID, nil)["siteUrl"].(string); u != "" {
		htmlFrameSel = "iframe.frame-site"
		b.waitFor("site frame", `document.querySelector('iframe.frame-site') !== null`, 30*time.Second)
		if src := eval[string](b, `document.querySelector('iframe.frame-site').src`); src != u {
			t.Errorf("html frame src %q, want its siteUrl %q", src, u)
		}
	} else {
		checkPreviewFrame(t, b, htmlID)
	}
	b.waitText(".crumbs", "Payments service")
	b.waitText("h1", "nightly-tests.html")
	// The frame is another origin (opaque, or the content origin): the
	// page cannot read it, and the report's script could not rename the page.
	if eval[bool](b, fmt.Sprintf(`(() => { try { return !!document.querySelector(%s).contentDocument; } catch { return false; } })()`, jsString(htmlFrameSel))) {
		t.Error("the dashboard can reach into the report's document: the frame is not isolated")
	}
	b.screenshot("reader-html.png")
	if got := eval[string](b, `document.title`); got != "nightly-tests.html · reportd" {
		t.Errorf("title %q: the report reached the dashboard", got)
	}
	checkLinks(t, b, htmlID, "nightly-tests.html", "nightly-tests.pdf")

	t.Log("Markdown reader: the server's rendering in a sandboxed frame, raw HTML dropped")
	b.do(chromedp.Navigate(d.base + "/#/reports/" + mdID))
	view := readMarkdownFrame(t, b)
	if view.H1 != "Weekly summary" || !slices.Contains(view.Cells, "231") {
		t.Errorf("rendered Markdown: heading %q, cells %q", view.H1, view.Cells)
	}
	if view.Scripts != 0 || strings.Contains(view.Text, "<script>") || !strings.Contains(view.Text, "Raw HTML stays text:") {
		t.Errorf("raw HTML in the rendered Markdown: %d scripts, text %q", view.Scripts, view.Text)
	}
	if !slices.ContainsFunc(view.Links, func(l []string) bool { return l[1] == "https://example.com/checklist" }) {
		t.Errorf("markdown links %q", view.Links)
	}
	if view.Checked != 2 {
		t.Errorf("%d checked task items, want 2", view.Checked)
	}
	b.screenshot("reader-markdown.png")
	checkContrast(t, b, "markdown reader")
	b.colorScheme("dark")
	checkContrast(t, b, "markdown reader, dark")
	b.colorScheme("")
	checkLinks(t, b, mdID, "weekly-summary.md", "weekly-summary.pdf")
	// Pretend to be a browser with an inline viewer, to see the frame path.
	eval[bool](b, `Object.defineProperty(navigator, 'pdfViewerEnabled', { value: true, configurable: true }) && true`)
	b.click(`.seg button[data-mode=pdf]`)
	waitPDF(t, b, true)
	eval[bool](b, `delete navigator.pdfViewerEnabled`)

	t.Log("PPTX reader: shown through its PDF")
	b.do(chromedp.Navigate(d.base + "/#/reports/" + pptxID))
	b.waitText("h1", "release-deck.pptx")
	waitPDF(t, b, false)
	if got := eval[string](b, `document.getElementById('open-pdf')?.getAttribute('href')`); got != "api/reports/"+pptxID+"/pdf" {
		t.Errorf("pptx Open PDF link %q", got)
	}
	b.screenshot("reader-pptx.png")
	checkContrast(t, b, "PDF panel")
	checkLinks(t, b, pptxID, "release-deck.pptx", "release-deck.pdf")

	t.Log("PDF reader: the report itself")
	b.do(chromedp.Navigate(d.base + "/#/reports/" + pdfID))
	b.waitText("h1", "release-deck.pdf")
	waitPDF(t, b, false)
	if got := eval[string](b, `document.getElementById('open-pdf')?.getAttribute('href')`); got != "api/reports/"+pdfID+"/preview" {
		t.Errorf("pdf Open PDF link %q", got)
	}
	checkLinks(t, b, pdfID, "release-deck.pdf", "release-deck.pdf")

	t.Log("rename")
	b.click("#back-to-project")
	b.waitFor("report list", `document.querySelectorAll('li.report').length === 4`, 30*time.Second)
	row := func(id string) string { return fmt.Sprintf(`li.report[data-report-id="%s"]`, id) }
	b.click(row(mdID) + ` button[aria-label^="Rename"]`)
	b.waitFor("rename dialog", `document.activeElement?.name === 'fileName'`, 10*time.Second)
	if sel := eval[string](b, `(() => { const i = document.activeElement; return i.value.slice(i.selectionStart, i.selectionEnd); })()`); sel != "weekly-summary" {
		t.Errorf("rename selects %q, want the name without extension", sel)
	}
	b.do(chromedp.SetValue(chromedp.CSS("dialog[open] input[name=fileName]"), "week-47.txt"))
	b.click("dialog[open] button[type=submit]")
	b.waitText("dialog[open] .dialog-error", "The name must end in .md.")
	b.do(chromedp.SetValue(chromedp.CSS("dialog[open] input[name=fileName]"), "week-47.md"))
	b.click("dialog[open] button[type=submit]")
	b.waitText(row(mdID)+" .report-name", "week-47.md")
	b.waitFor("dialog closed", `document.querySelector('dialog') === null`, 10*time.Second)
	b.waitText("#live", "Renamed to “week-47.md”.")

	t.Log("delete a report, and an API error shown as text")
	b.click(row(htmlID) + ` button[aria-label^="Delete"]`)
	b.waitText("dialog[open]", "Delete “nightly-tests.html”?")
	if got := eval[string](b, `document.activeElement.textContent`); got != "Cancel" {
		t.Errorf("a destructive dialog opens with focus on %q, want Cancel", got)
	}
	b.click("dialog[open] .btn-danger")
	b.waitFor("report gone", fmt.Sprintf(`document.querySelector('%s') === null`, row(htmlID)), 30*time.Second)
	b.waitText(".project-stats", "3 reports")
	// Another client deletes the PPTX; deleting it here must then show the
	// API's {error} text, not a raw status.
	d.api(t, "DELETE", "/reports/"+pptxID, nil)
	b.click(row(pptxID) + ` button[aria-label^="Delete"]`)
	b.click("dialog[open] .btn-danger")
	b.waitText("dialog[open] .dialog-error", "not found")
	if got := b.text("dialog[open] .dialog-error"); strings.Contains(got, "{") || strings.Contains(got, "NotFoundError:") {
		t.Errorf("API error shown raw: %q", got)
	}
	b.click("dialog[open] .dialog-actions button:first-child") // Cancel
	b.waitFor("dialog closed", `document.querySelector('dialog') === null`, 10*time.Second)

	t.Log("phone width")
	b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload())
	b.waitFor("report list", `document.querySelectorAll('li.report').length === 2`, 30*time.Second)
	if w := eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("phone layout scrolls sideways: %dpx wide", w)
	}
	b.screenshot("phone-project.png")
	b.do(chromedp.Navigate(d.base + "/#/"))
	b.waitFor("cards", `document.querySelectorAll('li.card').length === 3`, 30*time.Second)
	if w := eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("phone project list scrolls sideways: %dpx wide", w)
	}
	b.screenshot("phone-projects.png")
	b.click("#new-project")
	b.waitFor("create dialog", `document.activeElement?.name === 'name'`, 10*time.Second)
	if !eval[bool](b, `(() => { const d = document.querySelector('dialog[open]'); return d.scrollWidth <= d.clientWidth && d.getBoundingClientRect().right <= 390; })()`) {
		t.Error("the create dialog is wider than a phone screen")
	}
	b.do(chromedp.KeyEvent("\x1b"))
	b.waitFor("dialog closed", `document.querySelector('dialog') === null`, 10*time.Second)
	b.do(chromedp.EmulateViewport(1280, 800))

	t.Log("edit and delete the project")
	b.click(card + ` button[aria-label^="Edit"]`)
	b.waitFor("edit dialog", `document.activeElement?.name === 'name'`, 10*time.Second)
	b.do(chromedp.SetValue(chromedp.CSS("dialog[open] textarea[name=description]"), "Payments API: tests and reviews."))
	b.click("dialog[open] button[type=submit]")
	b.waitText(card+" .card-desc", "Payments API: tests and reviews.")
	b.click(card + ` button[aria-label^="Delete"]`)
	b.waitText("dialog[open]", "Delete “Payments service” and its 2 reports?")
	b.click("dialog[open] .btn-danger")
	b.waitFor("card gone", fmt.Sprintf(`document.querySelector('%s') === null`, card), 30*time.Second)
	b.waitFor("two cards", `document.querySelectorAll('li.card').length === 2`, 10*time.Second)

	t.Log("error states")
	b.do(chromedp.Navigate(d.base + "/#/projects/" + projectID))
	b.waitText(".state-error", "This project does not exist")
	b.waitText(".state-error .error-type", "NotFoundError")
	b.do(chromedp.Navigate(d.base + "/#/reports/999999"))
	b.waitText(".state-error", "This report does not exist")
	b.do(chromedp.Navigate(d.base + "/#/nowhere"))
	b.waitText("main", "Page not found")

	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(p, "\n"))
	}
}

// waitPDF waits for the PDF view and checks that what it offers is a PDF:
// the document in the viewer frame, or, in a browser without an inline
// PDF viewer (this headless shell), what the "Open PDF" link opens.
func waitPDF(t *testing.T, b *browser, wantFrame bool) {
	t.Helper()
	// The first LibreOffice conversion of a run can take a while.
	b.waitFor("PDF view", `['ready', 'error'].includes(document.querySelector('.viewer-pdf')?.dataset.state)`, 120*time.Second)
	if state := eval[string](b, `document.querySelector('.viewer-pdf').dataset.state`); state != "ready" {
		t.Fatalf("PDF view shows an error: %s", b.text(".viewer-pdf"))
	}
	if frame := b.count(".viewer-pdf iframe") == 1; frame != wantFrame {
		t.Fatalf("PDF view has a frame: %v, want %v; it shows: %s", frame, wantFrame, b.text(".viewer-pdf"))
	}
	if !wantFrame {
		b.waitText(".viewer-pdf", "The PDF is ready")
	}
	// The page's CSP (connect-src 'self') keeps even the test from reading
	// the blob: the frame must show a blob, and its source must be a PDF.
	head := eval[string](b, `(async () => {
		const f = document.querySelector('.viewer-pdf iframe');
		if (f && !f.src.startsWith('blob:')) return 'src ' + f.src;
		const url = f ? f.dataset.source : document.getElementById('open-pdf').href;
		const buf = await (await fetch(url)).arrayBuffer();
		return new TextDecoder().decode(buf.slice(0, 5));
	})()`)
	if head != "%PDF-" {
		t.Errorf("the PDF view's document starts with %q", head)
	}
}

// checkLinks follows the reader's two buttons from inside the page.
func checkLinks(t *testing.T, b *browser, id, original, pdf string) {
	t.Helper()
	got := eval[map[string]string](b, `(async () => {
		const out = {};
		for (const id of ['download-original', 'get-pdf']) {
			const a = document.getElementById(id);
			const res = await fetch(a.href);
			out[id] = a.getAttribute('href') + ' ' + a.getAttribute('download') + ' ' + res.status + ' ' +
				res.headers.get('Content-Disposition') + ' ' + res.headers.get('Content-Type');
		}
		return out;
	})()`)
	wantDownload := fmt.Sprintf(`api/reports/%s/download %s 200 attachment; filename="%s"`, id, original, original)
	if !strings.HasPrefix(got["download-original"], wantDownload) {
		t.Errorf("download button: %q, want prefix %q", got["download-original"], wantDownload)
	}
	wantPDF := fmt.Sprintf(`api/reports/%s/pdf %s 200 `, id, pdf)
	if !strings.HasPrefix(got["get-pdf"], wantPDF) || !strings.HasSuffix(got["get-pdf"], "application/pdf") {
		t.Errorf("PDF button: %q, want %q… application/pdf", got["get-pdf"], wantPDF)
	}
}

// TestDashboardToken: with auth.token set, reads stay open, a change is
// refused with the API's message, and the token entered in the page is
// then sent with every change.
func TestDashboardToken(t *testing.T) {
	d := startDaemon(t, "dashboard: true\nauth:\n  token: s3cret-token\n")
	b := startBrowser(t)
	b.do(chromedp.Navigate(d.base + "/"))
	b.waitText("main", "No projects yet")
	if eval[bool](b, `!document.getElementById('token-btn').hidden`) {
		t.Error("token button shown before any refusal")
	}
	b.click("#new-project")
	b.waitFor("create dialog", `document.activeElement?.name === 'name'`, 10*time.Second)
	b.do(chromedp.SendKeys(chromedp.CSS("dialog[open] input[name=name]"), "Locked"))
	b.click("dialog[open] button[type=submit]")
	b.waitText("dialog[open] .dialog-error", "a valid bearer token is required")
	// Why it asks: a change needs a token here, viewing does not.
	b.waitText("dialog[open] .dialog-error", "Changes on this reportd need a token since one was set up for it; viewing does not.")
	b.waitFor("token button", `!document.getElementById('token-btn').hidden`, 10*time.Second)
	b.click("dialog[open] .dialog-actions button:first-child")
	b.waitFor("dialog closed", `document.querySelector('dialog') === null`, 10*time.Second)

	b.click("#token-btn")
	b.waitFor("token dialog", `document.activeElement?.name === 'token'`, 10*time.Second)
	b.do(chromedp.SendKeys(chromedp.CSS("dialog[open] input[name=token]"), "s3cret-token"))
	b.click("dialog[open] button[type=submit]")
	b.waitText("#token-btn", "API token set")

	b.click("#new-project")
	b.waitFor("create dialog", `document.activeElement?.name === 'name'`, 10*time.Second)
	b.do(chromedp.SendKeys(chromedp.CSS("dialog[open] input[name=name]"), "Unlocked"))
	b.click("dialog[open] button[type=submit]")
	b.waitFor("project page", `document.querySelector('h1')?.textContent === 'Unlocked'`, 30*time.Second)
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#upload-input"), []string{fixture(t, "weekly-summary.md")}))
	b.waitFor("upload done", `document.querySelectorAll('.upload-done').length === 1`, 60*time.Second)
	b.waitText("ol.reports", "weekly-summary.md")
	if p := b.problems(); len(p) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(p, "\n"))
	}
}
