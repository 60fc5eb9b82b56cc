package convert

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// linkedPPT builds a binary .ppt (which no OOXML defusing reaches) whose
// first slide links, not embeds, two images: one at url, one at the local
// file path. A cold soffice outside the sandbox writes it; linked images it
// cannot load while saving stay links.
func linkedPPT(t *testing.T, url, path string) []byte {
	t.Helper()
	dir := t.TempDir()
	src := strings.Replace(string(fixture(t, "deck.fodp")), "<office:document ",
		`<office:document xmlns:xlink="http://www.w3.org/1999/xlink" `, 1)
	img := `<draw:frame svg:x="2cm" svg:y="7cm" svg:width="8cm" svg:height="8cm"><draw:image xlink:href="` + url +
		`" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame>` +
		`<draw:frame svg:x="12cm" svg:y="7cm" svg:width="8cm" svg:height="8cm"><draw:image xlink:href="file://` + path +
		`" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame>`
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

func redPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
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
// local file reach neither from inside the sandbox. Unsandboxed (the
// control), the same deck does reach them, so the test can tell.
func TestOfficeLinksStayOutside(t *testing.T) {
	needOffice(t)
	needSandbox(t)
	needPoppler(t)
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
	ppt := linkedPPT(t, srv.URL+"/linked.png", secret)
	if err := os.WriteFile(secret, pic, 0o644); err != nil {
		t.Fatal(err)
	}
	serve.Store(true)

	m := newManager(t, nil)
	pdf := convertOK(t, m, jobFor(t, report.PPT, ppt))
	wantText(t, pdfText(t, pdf), "Slide one")
	if n := hits.Load(); n != 0 {
		t.Errorf("the sandboxed engine fetched the linked URL %d times", n)
	}
	if n := pdfImages(t, pdf); n != 0 {
		t.Errorf("the sandboxed PDF embeds %d linked images; want none", n)
	}

	control := newManager(t, func(c *Config) { c.BwrapPath = "/nonexistent/bwrap"; c.Unsandboxed = true })
	pdf = convertOK(t, control, jobFor(t, report.PPT, ppt))
	if hits.Load() == 0 && pdfImages(t, pdf) == 0 {
		t.Error("control: even unsandboxed, LibreOffice loaded no linked image, so this test cannot tell what the sandbox stops")
	}
}
