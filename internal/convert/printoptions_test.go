package convert

import (
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// printJob is a job for content printed with the options of query q.
func printJob(t *testing.T, typ report.FileType, content []byte, q string) Job {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	job := jobFor(t, typ, content)
	if job.Print, err = report.ParsePrintOptions(v); err != nil {
		t.Fatal(err)
	}
	return job
}

const threePages = `<style>div{page-break-after:always}</style>` +
	`<div>page one</div><div>page two</div><div>page three</div>`

func TestPrintOptionsPaperAndLandscape(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	for _, c := range []struct{ q, size string }{
		{"paper=letter", "612 x 792"},
		{"paper=A4", "595"}, // 595.92 x 841.92
		{"paper=Legal", "612 x 1008"},
		{"paper=A3&landscape=true", "1191"},
		{"landscape=1", "841"},
	} {
		for _, typ := range []report.FileType{report.HTML, report.MD} {
			pdf := convertOK(t, m, printJob(t, typ, []byte("<p>sized</p>"), c.q))
			if size := testfixture.PDFInfo(t, pdf)["Page size"]; !strings.HasPrefix(size, c.size) {
				t.Errorf("%s %s: page size %q, want %s...", typ, c.q, size, c.size)
			}
		}
	}
	// An explicit paper wins over the document's @page size.
	pdf := convertOK(t, m, printJob(t, report.HTML, []byte(`<style>@page { size: A5 }</style><p>x</p>`), "paper=Letter"))
	if size := testfixture.PDFInfo(t, pdf)["Page size"]; !strings.HasPrefix(size, "612 x 792") {
		t.Errorf("paper=Letter over @page A5: page size %q", size)
	}
}

func TestPrintOptionsPageRanges(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	all := convertOK(t, m, printJob(t, report.HTML, []byte(threePages), ""))
	if n := testfixture.PDFInfo(t, all)["Pages"]; n != "3" {
		t.Fatalf("fixture prints %s pages, want 3", n)
	}
	pdf := convertOK(t, m, printJob(t, report.HTML, []byte(threePages), "pageRanges=2"))
	if n := testfixture.PDFInfo(t, pdf)["Pages"]; n != "1" {
		t.Errorf("pageRanges=2: %s pages, want 1", n)
	}
	text := testfixture.PDFText(t, pdf)
	if !strings.Contains(text, "page two") || strings.Contains(text, "page one") {
		t.Errorf("pageRanges=2 printed %q", text)
	}
	// A range running past the end is cut there, as Chromium does.
	pdf = convertOK(t, m, printJob(t, report.HTML, []byte(threePages), "pageRanges=2-9"))
	if n := testfixture.PDFInfo(t, pdf)["Pages"]; n != "2" {
		t.Errorf("pageRanges=2-9: %s pages, want 2", n)
	}
	// One that selects no page at all is refused.
	_, err := m.PDF(testfixture.Ctx(t), printJob(t, report.HTML, []byte(threePages), "pageRanges=5"))
	re := testfixture.WantKind(t, err, report.Validation)
	if !strings.Contains(re.Message, "beyond the end") {
		t.Errorf("out of range message: %q", re.Message)
	}
}

func TestPrintOptionsScaleMarginBackground(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	long := []byte(strings.Repeat("<p>line of text that takes room</p>", 150))
	pages := func(q string) string {
		return testfixture.PDFInfo(t, convertOK(t, m, printJob(t, report.HTML, long, q)))["Pages"]
	}
	if full, half := pages(""), pages("scale=0.5"); full == half {
		t.Errorf("scale=0.5 printed %s pages, as many as scale 1", half)
	}
	if narrow, wide := pages("margin=0"), pages("margin=2in"); narrow == wide {
		t.Errorf("margin 2in printed %s pages, as many as margin 0", wide)
	}
	bg := []byte(`<body style="background:#00f"><p>blue</p></body>`)
	with := convertOK(t, m, printJob(t, report.HTML, bg, ""))
	without := convertOK(t, m, printJob(t, report.HTML, bg, "printBackground=false"))
	if r, g, b := centre(t, with); !(b > 200 && r < 50 && g < 50) {
		t.Errorf("default print: centre pixel %d,%d,%d, want the blue background", r, g, b)
	}
	if r, g, b := centre(t, without); !(r > 200 && g > 200 && b > 200) {
		t.Errorf("printBackground=false: centre pixel %d,%d,%d, want white", r, g, b)
	}
}

// centre is the colour at the middle of the PDF's first page, rendered by poppler.
func centre(t *testing.T, pdf []byte) (r, g, b uint32) {
	t.Helper()
	testfixture.NeedPoppler(t)
	in := filepath.Join(t.TempDir(), "in.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(filepath.Dir(in), "page")
	if out, err := exec.Command("pdftoppm", "-r", "20", "-singlefile", "-png", in, root).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	f, err := os.Open(root + ".png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	bd := img.Bounds()
	r, g, b, _ = img.At(bd.Dx()/2, bd.Dy()/2).RGBA()
	return r >> 8, g >> 8, b >> 8
}

func TestPrintOptionsWaitForSelector(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	late := []byte(`<p>early</p><script>setTimeout(() => {
		const p = document.createElement('p'); p.id = 'late'; p.textContent = 'LATE ELEMENT';
		document.body.appendChild(p)}, 300)</script>`)
	pdf := convertOK(t, m, printJob(t, report.HTML, late, "waitForSelector=%23late"))
	testfixture.WantText(t, testfixture.PDFText(t, pdf), "LATE ELEMENT")
	pdf = convertOK(t, m, printJob(t, report.HTML, late, "waitForExpression=document.querySelector('%23late')"))
	testfixture.WantText(t, testfixture.PDFText(t, pdf), "LATE ELEMENT")
}

// waitForExpression runs inside the report before it is printed, and may
// come from any reader: it is evaluated without side effects, so it cannot
// rewrite what the report's PDF says, and what it throws (the page's own
// text, say) is not echoed in the error.
func TestWaitForExpressionCannotForgeOrLeak(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) { c.JobTimeout = 4 * time.Second; c.ChromiumTabs = 1 })
	victim := []byte(`<p>3 tests failed</p><p>SECRET-PAGE-TEXT</p>`)
	for _, expr := range []string{
		"(document.body.innerHTML='<h1>FORGED: all tests passed</h1>',true)",
		"(document.title='FORGED',true)",
		"(localStorage.setItem('x','FORGED'),true)",
		"document.getElementById('x')===null", // no side effect, but Chromium cannot rule one out
	} {
		_, err := m.PDF(testfixture.Ctx(t), printJob(t, report.HTML, victim, "waitForExpression="+url.QueryEscape(expr)))
		if re := testfixture.WantKind(t, err, report.Validation); !strings.Contains(re.Message, "without side effects") {
			t.Errorf("%s: message %q", expr, re.Message)
		}
	}
	// The report still prints as it is.
	text := testfixture.PDFText(t, convertOK(t, m, printJob(t, report.HTML, victim, "")))
	testfixture.WantText(t, text, "3 tests failed")
	if strings.Contains(text, "FORGED") {
		t.Fatalf("the PDF was forged: %q", text)
	}
	// Expressions that throw the page's text: never met, and never echoed.
	for _, expr := range []string{
		"(()=>{throw new Error(document.body.innerText)})()",
		"JSON.parse(document.body.innerText)", // a SyntaxError at run time, quoting the page
	} {
		_, err := m.PDF(testfixture.Ctx(t), printJob(t, report.HTML, victim, "waitForExpression="+url.QueryEscape(expr)))
		re := testfixture.WantKind(t, err, report.Conversion)
		if strings.Contains(re.Message, "SECRET-PAGE-TEXT") || strings.Contains(re.Message, "tests failed") {
			t.Errorf("%s: the error leaks the page: %q", expr, re.Message)
		}
		if !strings.Contains(re.Message, "was not true within 2s") {
			t.Errorf("%s: message %q", expr, re.Message)
		}
	}
	// A syntax error of the expression itself is named.
	_, err := m.PDF(testfixture.Ctx(t), printJob(t, report.HTML, victim, "waitForExpression="+url.QueryEscape("1 +")))
	if re := testfixture.WantKind(t, err, report.Validation); !strings.Contains(re.Message, "SyntaxError") {
		t.Errorf("message %q", re.Message)
	}
}

func TestPrintOptionsWaitNeverMet(t *testing.T) {
	testfixture.NeedChromium(t)
	m := newManager(t, func(c *Config) { c.JobTimeout = 4 * time.Second; c.ChromiumTabs = 1 })
	_, err := m.PDF(testfixture.Ctx(t), printJob(t, report.HTML, []byte("<p>x</p>"), "waitForSelector=%23never"))
	re := testfixture.WantKind(t, err, report.Conversion)
	if !strings.Contains(re.Message, `waitForSelector "#never" did not appear within 2s`) {
		t.Errorf("message %q", re.Message)
	}
	_, err = m.PDF(testfixture.Ctx(t), printJob(t, report.HTML, []byte("<p>x</p>"), "waitForSelector=%3A%3A%3Abad"))
	testfixture.WantKind(t, err, report.Validation)
	_, err = m.PDF(testfixture.Ctx(t), printJob(t, report.HTML, []byte("<p>x</p>"), "waitForExpression=%29%28"))
	testfixture.WantKind(t, err, report.Validation)
}

func TestPrintOptionsCacheVariants(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	job := jobFor(t, report.HTML, []byte("<p>variants</p>"))
	plain := m.cache.path(job.ReportID, job.ContentKey, m.printVariant(job.Print))
	if want := m.cache.path(job.ReportID, job.ContentKey, m.variant); plain != want {
		t.Fatalf("default print is cached at %s, not today's %s", plain, want)
	}
	a4, _ := report.ParsePrintOptions(url.Values{"paper": {"a4"}})
	A4, _ := report.ParsePrintOptions(url.Values{"paper": {"A4"}})
	if m.printVariant(a4) != m.printVariant(A4) || m.printVariant(a4) == m.variant {
		t.Fatal("paper=a4 and paper=A4 must share one variant, apart from the default")
	}
	// Options for a type that cannot take them are refused, not ignored.
	pdfJob := jobFor(t, report.PDF, fixture(t, "sample.pdf"))
	pdfJob.Print = a4
	_, err := m.PDF(testfixture.Ctx(t), pdfJob)
	testfixture.WantKind(t, err, report.Validation)
}

func TestPrintOptionsPDFPageRanges(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	three := convertOK(t, m, printJob(t, report.HTML, []byte(threePages), ""))
	pdf := convertOK(t, m, printJob(t, report.PDF, three, "pageRanges=2"))
	if n := testfixture.PDFInfo(t, pdf)["Pages"]; n != "1" {
		t.Errorf("pageRanges=2 of a stored 3-page PDF: %s pages, want 1", n)
	}
	if text := testfixture.PDFText(t, pdf); !strings.Contains(text, "page two") || strings.Contains(text, "page three") {
		t.Errorf("pageRanges=2 kept %q", text)
	}
	if n := testfixture.PDFInfo(t, convertOK(t, m, printJob(t, report.PDF, three, "pageRanges=1,3-9")))["Pages"]; n != "2" {
		t.Errorf("pageRanges=1,3-9: %s pages, want 2", n)
	}
	_, err := m.PDF(testfixture.Ctx(t), printJob(t, report.PDF, three, "pageRanges=4"))
	if re := testfixture.WantKind(t, err, report.Validation); !strings.Contains(re.Message, "3 pages") {
		t.Errorf("message %q", re.Message)
	}
	// Without options the stored file itself, byte for byte.
	if got := convertOK(t, m, printJob(t, report.PDF, three, "")); string(got) != string(three) {
		t.Error("a PDF without options is not passed through unchanged")
	}
}
