package office

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// An OOXML deck is a zip of parts tied together by relationship files
// (*.rels). A relationship with TargetMode="External" points outside the
// package: a picture linked to /etc/passwd, file:///..., or
// http://127.0.0.1:PORT/metrics is fetched by LibreOffice while it converts
// and ends up in the PDF. defuseDeck rewrites the deck so that LibreOffice
// only ever sees what is inside the zip, and refuses decks that expand far
// beyond their size (zip bombs) before they cost a worker any memory.

// deckLimits bound what a deck may expand to.
type deckLimits struct {
	maxBytes   int64 // total uncompressed bytes of all entries
	maxEntries int
	ratio      int64 // per entry, uncompressed/compressed above ratioFloor
	ratioFloor int64
}

// defaultDeckRatio and its floor: deflate reaches ~1000:1 on runs of one
// byte, while real slides, media and XML stay well under 100:1 at any size
// worth worrying about.
const (
	defaultDeckRatio      = 100
	defaultDeckRatioFloor = 8 << 20
	defaultDeckEntries    = 10000
)

// droppedRelTypes are relationship types whose targets are objects that can
// link out when LibreOffice activates them: OLE objects and ActiveX controls.
// A picture stands in for each on the slide, so the slide still renders.
var droppedRelTypes = []string{"/oleObject", "/activeXControl", "/activeXControlBinary", "/control"}

// droppedParts are the parts those relationships pointed at.
var droppedParts = regexp.MustCompile(`(?i)^ppt/(embeddings/[^/]*\.bin|activeX/.*)$`)

// hasScheme matches a target that is a URL (file:, http:, smb:, ...) or a
// network path, which an internal relationship has no business holding.
var hasScheme = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*:|//|\\\\)`)

// defuseDeck copies the .pptx at src to dst with every external
// relationship and every OLE/ActiveX object removed. Errors are
// *report.Error; on error dst may hold a partial file for the caller to
// remove.
func defuseDeck(src, dst string, lim deckLimits) error {
	in, err := os.Open(src)
	if err != nil {
		return report.Wrap(report.Storage, err, "the report file is missing")
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return report.Wrap(report.Storage, err, "the report file is missing")
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return engine.DiskErr(err, "cannot write a temporary file")
	}
	err = defuse(in, info.Size(), out, lim)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = engine.DiskErr(cerr, "cannot write a temporary file")
	}
	return err
}

// defuse is defuseDeck on a reader and a writer.
func defuse(r io.ReaderAt, size int64, w io.Writer, lim deckLimits) error {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return damaged(err)
	}
	if len(z.File) > lim.maxEntries {
		return report.Errorf(report.Conversion, "the presentation has more than %d parts", lim.maxEntries)
	}
	seen := make(map[string]bool, len(z.File))
	for _, f := range z.File {
		name := strings.ToLower(f.Name)
		if seen[name] {
			// Two readers may pick different copies; refuse the ambiguity.
			return damaged(fmt.Errorf("duplicate part %q", f.Name))
		}
		seen[name] = true
	}
	zw := zip.NewWriter(w)
	total := &budget{left: lim.maxBytes, max: lim.maxBytes}
	for _, f := range z.File {
		if droppedParts.MatchString(f.Name) || strings.HasSuffix(f.Name, "/") {
			continue
		}
		if err := copyPart(zw, f, total, lim); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return engine.DiskErr(err, "cannot write a temporary file")
	}
	return nil
}

// copyPart reads one entry to the end, counting the bytes it really
// expands to (the header's sizes are the uploader's word), and writes it:
// a relationship file rewritten, any other part as its original
// compressed bytes.
func copyPart(zw *zip.Writer, f *zip.File, total *budget, lim deckLimits) error {
	rc, err := f.Open()
	if err != nil {
		return damaged(err)
	}
	defer rc.Close()
	lr := &ratioReader{r: rc, b: total, name: f.Name, packed: int64(f.CompressedSize64), lim: lim}
	if isRels(f.Name) {
		// Relationship files are small; keep at most 16 MiB in memory.
		body, err := io.ReadAll(io.LimitReader(lr, 16<<20+1))
		if err != nil {
			return readErr(err)
		}
		if len(body) > 16<<20 {
			return damaged(fmt.Errorf("relationship part %q is too large", f.Name))
		}
		clean, err := cleanRels(f.Name, body)
		if err != nil {
			return damaged(fmt.Errorf("%s: %w", f.Name, err))
		}
		pw, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		if err != nil {
			return engine.DiskErr(err, "cannot write a temporary file")
		}
		if _, err := pw.Write(clean); err != nil {
			return engine.DiskErr(err, "cannot write a temporary file")
		}
		return nil
	}
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return readErr(err)
	}
	raw, err := f.OpenRaw()
	if err != nil {
		return damaged(err)
	}
	h := f.FileHeader            // checked: the CRC and sizes matched what was read
	h.Extra, h.Comment = nil, "" // nothing for LibreOffice to read but the part
	pw, err := zw.CreateRaw(&h)
	if err != nil {
		return engine.DiskErr(err, "cannot write a temporary file")
	}
	if _, err := io.Copy(pw, raw); err != nil {
		return engine.DiskErr(err, "cannot write a temporary file")
	}
	return nil
}

func isRels(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".rels") }

// relationships is the part of the OPC relationships schema that matters.
type relationships struct {
	XMLName xml.Name       `xml:"http://schemas.openxmlformats.org/package/2006/relationships Relationships"`
	Rels    []relationship `xml:"Relationship"`
}

type relationship struct {
	ID         string `xml:"Id,attr"`
	Type       string `xml:"Type,attr"`
	Target     string `xml:"Target,attr"`
	TargetMode string `xml:"TargetMode,attr,omitempty"`
}

// cleanRels returns the relationships in body that stay inside the
// package and are not OLE or ActiveX objects, re-serialised. A slide whose
// picture or hyperlink lost its relationship shows the link text, or an
// empty frame, and converts as before.
func cleanRels(name string, body []byte) ([]byte, error) {
	var in relationships
	d := xml.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&in); err != nil {
		return nil, err
	}
	out := relationships{XMLName: in.XMLName, Rels: []relationship{}}
	for _, r := range in.Rels {
		if keepRel(relsBase(name), r) {
			r.TargetMode = ""
			out.Rels = append(out.Rels, r)
		}
	}
	b, err := xml.Marshal(out)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), b...), nil
}

// relsBase is the folder that relative targets in the relationship file
// name start from: that of its source part (ppt/slides for
// ppt/slides/_rels/slide1.xml.rels).
func relsBase(name string) string { return path.Dir(path.Dir(name)) }

// climbs reports whether target, taken relative to base, leaves the package.
func climbs(base, target string) bool {
	depth := 0
	if !strings.HasPrefix(target, "/") && base != "." {
		depth = strings.Count(base, "/") + 1
	}
	for _, seg := range strings.Split(target, "/") {
		switch seg {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

func keepRel(base string, r relationship) bool {
	if mode := strings.TrimSpace(r.TargetMode); mode != "" && !strings.EqualFold(mode, "Internal") {
		return false // External, or anything a reader might treat as such
	}
	t, err := url.PathUnescape(strings.TrimSpace(r.Target))
	if err != nil || hasScheme.MatchString(t) || strings.Contains(t, "\\") {
		return false
	}
	if climbs(base, t) {
		return false // a relative target above the package root is no part
	}
	for _, s := range droppedRelTypes {
		if strings.HasSuffix(r.Type, s) {
			return false
		}
	}
	return true
}

// budget is the deck's total of uncompressed bytes still allowed.
type budget struct{ left, max int64 }

var (
	errTooBig   = errors.New("expands too much")
	errTooDense = errors.New("compression ratio of a zip bomb")
)

// ratioReader counts the bytes an entry really expands to against the
// deck's budget and the entry's compressed size.
type ratioReader struct {
	r      io.Reader
	b      *budget
	name   string
	packed int64
	n      int64
	lim    deckLimits
}

func (r *ratioReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	r.b.left -= int64(n)
	if r.b.left < 0 {
		return n, &limitError{errTooBig, fmt.Sprintf("the presentation expands to more than %s", byteSize(r.b.max))}
	}
	if r.n > r.lim.ratioFloor && r.n > r.lim.ratio*max(r.packed, 1) {
		return n, &limitError{errTooDense, fmt.Sprintf(
			"the presentation's part %q expands more than %d times its compressed size, like a zip bomb", r.name, r.lim.ratio)}
	}
	return n, err
}

type limitError struct {
	err error
	msg string
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.err }

func readErr(err error) error {
	var le *limitError
	if errors.As(err, &le) {
		return report.Wrap(report.Conversion, err, le.msg)
	}
	return damaged(err)
}

func damaged(err error) error {
	return report.Wrap(report.Conversion, err, "the file is not a valid pptx presentation: it is damaged")
}

// byteSize formats n in the largest binary unit that divides it evenly.
func byteSize(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return fmt.Sprintf("%d %s", n/u.v, u.s)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
