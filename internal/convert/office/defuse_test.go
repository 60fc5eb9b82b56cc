package office

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sniff"
	"github.com/reportd/reportd/internal/testfixture"
)

var testLimits = deckLimits{maxBytes: 64 << 20, maxEntries: 1000, ratio: 100, ratioFloor: 1 << 20}

// editDeck returns base with parts replaced or added (nil deletes).
func editDeck(t testing.TB, base []byte, parts map[string][]byte) []byte {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(base), int64(len(base)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	done := map[string]bool{}
	for _, f := range z.File {
		body, ok := parts[f.Name]
		done[f.Name] = true
		if !ok {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(rc)
			rc.Close()
		} else if body == nil {
			continue
		}
		pw, _ := w.Create(f.Name)
		pw.Write(body)
	}
	for name, body := range parts {
		if !done[name] && body != nil {
			pw, _ := w.Create(name)
			pw.Write(body)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// linkedDeck is the fixture deck with a picture on slide one linked to
// target, a hyperlink on its title, and an OLE object and ActiveX control.
func linkedDeck(t testing.TB, target string) []byte {
	t.Helper()
	base, err := os.ReadFile(filepath.Join("..", "testdata", "deck.pptx"))
	if err != nil {
		t.Fatal(err)
	}
	z, _ := zip.NewReader(bytes.NewReader(base), int64(len(base)))
	var slide []byte
	for _, f := range z.File {
		if f.Name == "ppt/slides/slide1.xml" {
			rc, _ := f.Open()
			slide, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	pic := `<p:pic><p:nvPicPr><p:cNvPr id="50" name="Linked"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>` +
		`<p:blipFill><a:blip r:link="rId9"/><a:stretch><a:fillRect/></a:stretch></p:blipFill>` +
		`<p:spPr><a:xfrm><a:off x="720000" y="2520000"/><a:ext cx="4320000" cy="2880000"/></a:xfrm>` +
		`<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>`
	s := strings.Replace(string(slide), "</p:spTree>", pic+"</p:spTree>", 1)
	s = strings.Replace(s, `<a:latin typeface="Arial"/></a:rPr><a:t>Slide one`,
		`<a:latin typeface="Arial"/><a:hlinkClick r:id="rId10"/></a:rPr><a:t>Slide one`, 1)
	rels := `<?xml version="1.0" encoding="UTF-8"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slideLayout" Target="../slideLayouts/slideLayout2.xml"/>` +
		`<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="` + target + `" TargetMode="External"/>` +
		`<Relationship Id="rId10" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="` + target + `" TargetMode="External"/>` +
		`<Relationship Id="rId11" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/oleObject" Target="../embeddings/oleObject1.bin"/>` +
		`<Relationship Id="rId12" Type="http://schemas.microsoft.com/office/2006/relationships/activeXControlBinary" Target="../activeX/activeX1.bin"/>` +
		`<Relationship Id="rId13" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="file:///etc/hostname"/>` +
		`<Relationship Id="rId14" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="../../../../etc/hostname"/>` +
		`</Relationships>`
	return editDeck(t, base, map[string][]byte{
		"ppt/slides/slide1.xml":            []byte(s),
		"ppt/slides/_rels/slide1.xml.rels": []byte(rels),
		"ppt/embeddings/oleObject1.bin":    append(append([]byte{}, sniff.SigOLE2...), "link"...),
		"ppt/activeX/activeX1.bin":         []byte("control"),
	})
}

func defuseBytes(t testing.TB, deck []byte, lim deckLimits) ([]byte, error) {
	t.Helper()
	var out bytes.Buffer
	err := defuse(bytes.NewReader(deck), int64(len(deck)), &out, lim)
	return out.Bytes(), err
}

func readParts(t testing.TB, b []byte) map[string]string {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("defused deck is not a zip: %v", err)
	}
	parts := map[string]string{}
	for _, f := range z.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		parts[f.Name] = string(body)
	}
	return parts
}

func TestDefuseDropsLinksAndObjects(t *testing.T) {
	deck := linkedDeck(t, "http://127.0.0.1:1/metrics")
	out, err := defuseBytes(t, deck, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	before, after := readParts(t, deck), readParts(t, out)
	rels := after["ppt/slides/_rels/slide1.xml.rels"]
	if !strings.Contains(rels, `Id="rId1"`) || !strings.Contains(rels, "slideLayout2.xml") {
		t.Errorf("the layout relationship is gone:\n%s", rels)
	}
	for _, id := range []string{"rId9", "rId10", "rId11", "rId12", "rId13", "rId14"} {
		if strings.Contains(rels, `"`+id+`"`) {
			t.Errorf("relationship %s survived:\n%s", id, rels)
		}
	}
	for _, gone := range []string{"ppt/embeddings/oleObject1.bin", "ppt/activeX/activeX1.bin"} {
		if _, ok := after[gone]; ok {
			t.Errorf("part %s survived", gone)
		}
	}
	for name, body := range before {
		if isRels(name) || droppedParts.MatchString(name) {
			continue
		}
		if after[name] != body {
			t.Errorf("part %s changed", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("part %s appeared", name)
		}
	}
}

// zipOf builds a zip whose single extra entry is body, stored deflated.
func zipOf(t testing.TB, name string, body []byte) []byte {
	t.Helper()
	base, err := os.ReadFile(filepath.Join("..", "testdata", "deck.pptx"))
	if err != nil {
		t.Fatal(err)
	}
	return editDeck(t, base, map[string][]byte{name: body})
}

func TestDefuseRefusesBombs(t *testing.T) {
	random := make([]byte, 3<<20)
	rand.Read(random)
	for _, c := range []struct {
		name string
		deck []byte
		lim  deckLimits
		want string
	}{
		{"dense entry", zipOf(t, "ppt/media/image9.png", make([]byte, 4<<20)), testLimits, "zip bomb"},
		{"total size", zipOf(t, "ppt/media/image9.png", random),
			deckLimits{maxBytes: 2 << 20, maxEntries: 1000, ratio: 100, ratioFloor: 1 << 20}, "expands to more than 2 MiB"},
		{"too many parts", zipOf(t, "ppt/media/image9.png", nil), deckLimits{maxBytes: 1 << 30, maxEntries: 10, ratio: 100, ratioFloor: 1 << 20}, "more than 10 parts"},
		{"not a zip", []byte("PK\x03\x04 not really"), testLimits, "damaged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := defuseBytes(t, c.deck, c.lim)
			re := testfixture.WantKind(t, err, report.Conversion)
			if !strings.Contains(re.Error(), c.want) {
				t.Errorf("error %q lacks %q", re.Error(), c.want)
			}
		})
	}
}

// A header that claims a small size does not buy the entry a pass: the
// bytes read are what count.
func TestDefuseCountsBytesNotHeaders(t *testing.T) {
	var packed bytes.Buffer
	fw := zip.NewWriter(&packed)
	w, _ := fw.Create("x")
	w.Write(make([]byte, 4<<20))
	fw.Close()
	z, _ := zip.NewReader(bytes.NewReader(packed.Bytes()), int64(packed.Len()))
	raw, _ := z.File[0].OpenRaw()
	data, _ := io.ReadAll(raw)

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	pw, _ := zw.Create("ppt/presentation.xml")
	pw.Write([]byte("<p/>"))
	h := z.File[0].FileHeader
	h.Name = "ppt/media/lie.bin"
	h.UncompressedSize64 = 100 // the lie
	rw, err := zw.CreateRaw(&h)
	if err != nil {
		t.Fatal(err)
	}
	rw.Write(data)
	zw.Close()
	_, err = defuseBytes(t, buf.Bytes(), testLimits)
	testfixture.WantKind(t, err, report.Conversion)
}

func TestDefuseRefusesDuplicateParts(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range []string{"ppt/presentation.xml", "PPT/Presentation.xml"} {
		w, _ := zw.Create(n)
		w.Write([]byte("<p/>"))
	}
	zw.Close()
	_, err := defuseBytes(t, buf.Bytes(), testLimits)
	testfixture.WantKind(t, err, report.Conversion)
}

func FuzzDefuse(f *testing.F) {
	base, err := os.ReadFile(filepath.Join("..", "testdata", "deck.pptx"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(base)
	f.Add(linkedDeck(f, "file:///etc/passwd"))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, deck []byte) {
		out, err := defuseBytes(t, deck, testLimits)
		if err != nil {
			if !report.IsKind(err, report.Conversion) {
				t.Fatalf("error of kind other than Conversion: %v", err)
			}
			return
		}
		// What comes out is a zip with no external relationship left, and
		// defusing it again changes nothing.
		for name, body := range readParts(t, out) {
			if isRels(name) && strings.Contains(strings.ToLower(body), "external") {
				t.Fatalf("%s still links out:\n%s", name, body)
			}
		}
		again, err := defuseBytes(t, out, testLimits)
		if err != nil {
			t.Fatalf("defused deck refused on a second pass: %v", err)
		}
		if !bytes.Equal(again, out) {
			t.Fatal("defusing is not idempotent")
		}
	})
}

// pngFile writes a small opaque PNG and returns its path.
func pngFile(t *testing.T) string {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	img.Set(3, 3, color.RGBA{R: 0xff, A: 0xff})
	p := filepath.Join(t.TempDir(), "secret.png")
	var buf bytes.Buffer
	png.Encode(&buf, img)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pdfImages counts the images pdfimages lists in pdf.
func pdfImages(t *testing.T, pdf []byte) int {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out.pdf")
	os.WriteFile(p, pdf, 0o644)
	out, err := exec.Command("pdfimages", "-list", p).Output()
	if err != nil {
		t.Fatalf("pdfimages: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return max(0, len(lines)-2) // two header lines
}

func TestLinkedPicturesAreNotFetched(t *testing.T) {
	testfixture.NeedOffice(t)
	testfixture.NeedPoppler(t)
	img := pngFile(t)
	imgBytes, _ := os.ReadFile(img)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		w.Write(imgBytes)
	}))
	defer srv.Close()
	e := sharedEngine(t)
	for _, target := range []string{img, "file://" + img, srv.URL + "/metrics.png"} {
		t.Run(target, func(t *testing.T) {
			pdf := convertOK(t, e, report.PPTX, linkedDeck(t, target))
			testfixture.WantText(t, testfixture.PDFText(t, pdf), "Slide one", "Slide two")
			if n := pdfImages(t, pdf); n != 0 {
				t.Errorf("the PDF holds %d images; the linked picture was fetched", n)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback listener got %d requests", n)
	}

	// The control: the same decks, neither defused nor sandboxed (the
	// office pool called directly, as Engine.Convert would with no defusing),
	// do fetch the URL and embed each local file. So the checks above would
	// notice defusing and the sandbox both failing.
	control := newEngineBox(t, unsandboxed, nil)
	for _, target := range []string{img, "file://" + img, srv.URL + "/metrics.png"} {
		t.Run("control "+target, func(t *testing.T) {
			before := hits.Load()
			in := filepath.Join(t.TempDir(), "linked.pptx")
			if err := os.WriteFile(in, linkedDeck(t, target), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out.pdf")
			leave, err := control.main.gate.Enter(testfixture.Ctx(t), 0)
			if err != nil {
				t.Fatal(err)
			}
			err = control.main.convert(testfixture.Ctx(t), report.PPTX, in, out)
			leave()
			if err != nil {
				t.Fatal(err)
			}
			pdf, _ := os.ReadFile(out)
			n, fetched := pdfImages(t, pdf), hits.Load()-before
			t.Logf("undefused, unsandboxed: %d images, %d listener hits", n, fetched)
			if n == 0 {
				t.Error("undefused and unsandboxed, LibreOffice embedded no linked picture: this test cannot tell what defusing and the sandbox stop")
			}
			if strings.HasPrefix(target, "http") && fetched == 0 {
				t.Error("undefused and unsandboxed, LibreOffice did not fetch the linked URL: this test cannot tell what defusing and the sandbox stop")
			}
		})
	}
}

func TestDeckBombRefusedBeforeLibreOffice(t *testing.T) {
	testfixture.NeedOffice(t)
	e := sharedEngine(t)
	defer func(n int64) { e.cfg.DeckMaxBytes = n }(e.cfg.DeckMaxBytes)
	e.cfg.DeckMaxBytes = 8 << 20
	ran := e.main.done.Load()
	random := make([]byte, 9<<20)
	rand.Read(random)
	for _, deck := range [][]byte{
		zipOf(t, "ppt/media/image9.png", make([]byte, 64<<20)), // ~64 KiB packed
		zipOf(t, "ppt/media/image9.png", random),
	} {
		_, err := deckPDF(t, e, report.PPTX, deck)
		re := testfixture.WantKind(t, err, report.Conversion)
		if !strings.Contains(re.Error(), "zip bomb") && !strings.Contains(re.Error(), "expands to more than 8 MiB") {
			t.Errorf("error %q names no limit", re.Error())
		}
	}
	if n := e.main.done.Load() - ran; n != 0 {
		t.Errorf("LibreOffice ran %d jobs; the decks should not reach it", n)
	}
}
