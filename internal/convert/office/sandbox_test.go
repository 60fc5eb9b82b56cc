package office

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// linkedPPT builds a binary .ppt (which no OOXML defusing reaches) whose
// first slide links, not embeds, three images: one at url, one at the
// file:// URL of path, one at the plain local path plain (no scheme). A cold
// soffice outside the sandbox writes it; linked images it cannot load while
// saving stay links. LibreOffice stores a link to a local file relative to
// the deck where it can, which would not point at the file once the deck is
// elsewhere; so each local link is written as a relative name of the same
// length as its target, and then replaced in place by the target.
func linkedPPT(t *testing.T, url, path, plain string) []byte {
	t.Helper()
	dir := t.TempDir()
	locals := []string{"file://" + path, plain}
	var rels []string
	for i, target := range locals {
		if len(target) < 8 || len(target) > 200 {
			t.Fatalf("link %q: want 8-200 bytes", target)
		}
		rels = append(rels, strings.Repeat(string(rune('p'+i)), len(target)-4)+".png")
	}
	frame := func(x, href string) string {
		return `<draw:frame svg:x="` + x + `" svg:y="7cm" svg:width="6cm" svg:height="6cm"><draw:image xlink:href="` + href +
			`" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame>`
	}
	src := strings.Replace(string(fixture(t, "deck.fodp")), "<office:document ",
		`<office:document xmlns:xlink="http://www.w3.org/1999/xlink" `, 1)
	img := frame("1cm", url) + frame("9cm", rels[0]) + frame("17cm", rels[1])
	src = strings.Replace(src, "</draw:text-box></draw:frame>", "</draw:text-box></draw:frame>"+img, 1)
	if err := os.WriteFile(filepath.Join(dir, "linked.fodp"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("soffice", "-env:UserInstallation=file://"+filepath.Join(dir, "profile"),
		"--headless", "--convert-to", "ppt", "--outdir", dir, filepath.Join(dir, "linked.fodp"))
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making the .ppt: %v\n%s", err, out)
	}
	ppt, err := os.ReadFile(filepath.Join(dir, "linked.ppt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ppt, utf16le(url)) {
		t.Fatal("the generated .ppt lost its image link")
	}
	for i, rel := range rels {
		if n := bytes.Count(ppt, utf16le(rel)); n != 1 {
			t.Fatalf("the generated .ppt holds the link %q %d times, want once", rel, n)
		}
		ppt = bytes.Replace(ppt, utf16le(rel), utf16le(locals[i]), 1)
	}
	return ppt
}

// utf16le is s as a .ppt stores link targets.
func utf16le(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return b
}

func redPNG(t *testing.T) []byte { return squarePNG(t, 32) }

// squarePNG is a white n×n PNG with one red pixel.
func squarePNG(t *testing.T, n int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestOfficeLinksStayOutside: a deck's links to a loopback URL and to a
// local file (as a file:// URL and as a plain path) reach none of them from
// inside the sandbox. Unsandboxed (the
// control), the same deck does reach them, so the test can tell.
func TestOfficeLinksStayOutside(t *testing.T) {
	testfixture.NeedOffice(t)
	needSandbox(t)
	testfixture.NeedPoppler(t)
	pic := redPNG(t)
	var serve atomic.Bool
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !serve.Load() {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		w.Write(pic)
	}))
	defer srv.Close()
	secret := filepath.Join(t.TempDir(), "secret.png")
	plain := filepath.Join(t.TempDir(), "plain.png")
	ppt := linkedPPT(t, srv.URL+"/linked.png", secret, plain)
	// Sizes tell the images apart in the PDF: 32 fetched, 40 file://, 48 plain.
	if err := os.WriteFile(secret, squarePNG(t, 40), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, squarePNG(t, 48), 0o644); err != nil {
		t.Fatal(err)
	}
	serve.Store(true)

	e := newEngine(t, nil)
	pdf := convertOK(t, e, report.PPT, ppt)
	testfixture.WantText(t, testfixture.PDFText(t, pdf), "Slide one")
	if n := hits.Load(); n != 0 {
		t.Errorf("the sandboxed engine fetched the linked URL %d times", n)
	}
	if n := pdfImages(t, pdf); n != 0 {
		t.Errorf("the sandboxed PDF embeds %d linked images; want none", n)
	}

	control := newEngineBox(t, unsandboxed, nil)
	pdf = convertOK(t, control, report.PPT, ppt)
	// Each link on its own: the URL is fetched (a hit), and each local
	// file is read (its image, told by its size, is in the PDF).
	widths := pdfImageWidths(t, pdf)
	t.Logf("control: %d listener hits, images of widths %v in the PDF", hits.Load(), widths)
	if hits.Load() == 0 {
		t.Error("control: unsandboxed, LibreOffice did not fetch the linked URL either, so this test cannot tell what the sandbox stops")
	}
	for _, w := range []string{"40", "48"} {
		if !slices.Contains(widths, w) {
			t.Errorf("control: unsandboxed, no %s-pixel image in the PDF: LibreOffice did not read that local file either, so this test cannot tell what the sandbox stops", w)
		}
	}
}

// pdfImageWidths lists the width in pixels of every image in the PDF.
func pdfImageWidths(t *testing.T, pdf []byte) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out.pdf")
	if err := os.WriteFile(p, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdfimages", "-list", p).Output()
	if err != nil {
		t.Fatalf("pdfimages: %v", err)
	}
	var widths []string
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); i >= 2 && len(f) > 4 {
			widths = append(widths, f[3]) // page num type width height ...
		}
	}
	return widths
}

// A worker's sandbox holds its own directory and not a sibling's: the
// small-deck lane's worker cannot see the main worker's profile or job
// directory, nor the other way round (the mounts of each worker's soffice,
// read from /proc), and a deck converted on the small lane that links a
// picture inside the main worker's directory gets nothing.
func TestOfficeWorkersCannotSeeEachOther(t *testing.T) {
	testfixture.NeedOffice(t)
	needSandbox(t)
	testfixture.NeedPoppler(t)
	e := newEngine(t, func(c *Config) { c.SmallDeckBytes = 1 << 20 })
	ppt := fixture(t, "deck.ppt") // 452 KiB: the small lane
	convertOK(t, e, report.PPT, ppt)
	small, main := e.small.workers[0], e.main.workers[0]
	for main.sofficePID.Load() == 0 { // the main pool warms up on its own
		time.Sleep(50 * time.Millisecond)
	}
	mounts := func(w *officeWorker) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", w.sofficePID.Load()))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct{ self, other *officeWorker }{{small, main}, {main, small}} {
		got := mounts(c.self)
		if !strings.Contains(got, " "+c.self.dir+" ") {
			t.Errorf("worker %s: its own directory is not mounted in its sandbox:\n%s", c.self.dir, got)
		}
		if strings.Contains(got, c.other.dir) {
			t.Errorf("worker %s: its sandbox mounts the sibling's %s:\n%s", c.self.dir, c.other.dir, got)
		}
	}

	// A picture in the main worker's profile, linked by a small deck.
	pic := filepath.Join(main.profile, "sibling.png")
	if err := os.WriteFile(pic, squarePNG(t, 40), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := linkedPPT(t, "http://127.0.0.1:9/none.png", pic, pic)
	if int64(len(linked)) > e.cfg.SmallDeckBytes {
		t.Fatalf("linked deck of %d bytes would not take the small lane", len(linked))
	}
	done := e.small.done.Load()
	pdf := convertOK(t, e, report.PPT, linked)
	if e.small.done.Load() != done+1 {
		t.Fatal("the linked deck did not convert on the small lane")
	}
	if n := pdfImages(t, pdf); n != 0 {
		t.Errorf("the small lane's worker read a picture in the main worker's directory (%d images)", n)
	}
	control := newEngineBox(t, unsandboxed, nil)
	if w := pdfImageWidths(t, convertOK(t, control, report.PPT, linked)); !slices.Contains(w, "40") {
		t.Errorf("control: unsandboxed, the picture was not read either (image widths %v): this test cannot tell", w)
	}
}
