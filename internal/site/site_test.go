package site

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/local"
	"github.com/reportd/reportd/internal/report"
)

var ctx = context.Background()

// env is a local store in a fresh directory: base/data/objects holds the
// objects, base/data/tmp the store's and the ingest's temp files.
type env struct {
	base, objects, tmp string
	store              *local.Store
}

func newEnv(t *testing.T) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{base: base, objects: filepath.Join(base, "data", "objects"), tmp: filepath.Join(base, "data", "tmp")}
	s, err := local.Open(e.objects, e.tmp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e.store = s
	return e
}

func (e *env) opt(key string) Options { return Options{ManifestKey: key, TempDir: e.tmp} }

func (e *env) ingest(t *testing.T, src Source, opt Options) (Manifest, error) {
	t.Helper()
	if opt.ManifestKey == "" {
		opt.ManifestKey = "sites/1.json"
	}
	if opt.TempDir == "" {
		opt.TempDir = e.tmp
	}
	return Ingest(ctx, e.store, src, opt)
}

// keys lists the store's objects under prefix, sorted.
func (e *env) keys(t *testing.T, prefix string) []string {
	t.Helper()
	var ks []string
	if err := e.store.Walk(ctx, prefix, func(i blob.Info) error { ks = append(ks, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ks)
	return ks
}

// tmpEntries lists the temp directory, once the store removed the staging
// folders of its committed batches (in the background).
func (e *env) tmpEntries() ([]os.DirEntry, error) {
	e.store.Settle()
	return os.ReadDir(e.tmp)
}

// files lists every non-directory below the test's parent directory (so
// anything an entry name could have escaped to), relative to base.
func (e *env) files(t *testing.T) []string {
	t.Helper()
	e.store.Settle()
	var out []string
	filepath.WalkDir(filepath.Dir(e.base), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			r, _ := filepath.Rel(e.base, p)
			out = append(out, filepath.ToSlash(r))
		}
		return nil
	})
	return out
}

// nothingStored checks that a refused ingest left no object, no manifest,
// no temp file, and no file anywhere around the data directory.
func (e *env) nothingStored(t *testing.T) {
	t.Helper()
	if f := e.files(t); len(f) != 0 {
		t.Errorf("files left after a refused ingest: %q", f)
	}
}

// refused checks err's kind and that its message contains want.
func refused(t *testing.T, err error, kind report.Kind, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %s %q", kind, want)
	}
	if !report.IsKind(err, kind) {
		t.Fatalf("err = %v, want kind %s", err, kind)
	}
	msg := report.MessageOf(err)
	if !strings.Contains(msg, want) {
		t.Fatalf("message %q does not contain %q", msg, want)
	}
	t.Logf("refused: %s: %s", kind, msg)
}

type ent struct {
	name string
	body string
	mode fs.FileMode // zip: SetMode when non-zero
	hdr  *tar.Header // tar: used as is (Size set from body)
}

func files(kv ...string) []ent {
	var es []ent
	for i := 0; i+1 < len(kv); i += 2 {
		es = append(es, ent{name: kv[i], body: kv[i+1]})
	}
	return es
}

func zipOf(t *testing.T, es []ent) Source {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range es {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.body == "" {
			fh.Method = zip.Store // a deflater per empty entry is most of a 100k-entry archive's cost
		}
		if e.mode != 0 {
			fh.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return Zip(bytes.NewReader(b.Bytes()), int64(b.Len()))
}

func tarBytes(t *testing.T, gz bool, es []ent) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.Writer = &b
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&b)
		w = zw
	}
	tw := tar.NewWriter(w)
	for _, e := range es {
		h := e.hdr
		if h == nil {
			h = &tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644}
			if strings.HasSuffix(e.name, "/") {
				h.Typeflag = tar.TypeDir
			}
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("tar header %q: %v", h.Name, err)
		}
		io.WriteString(tw, e.body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		zw.Close()
	}
	return b.Bytes()
}

func tgzOf(t *testing.T, es []ent) Source {
	b := tarBytes(t, true, es)
	return TarGz(bytes.NewReader(b), int64(len(b)))
}

func tarOf(t *testing.T, es []ent) Source {
	b := tarBytes(t, false, es)
	return Tar(bytes.NewReader(b), int64(len(b)))
}

func partsOf(es []ent) Source {
	var ps []Part
	for _, e := range es {
		ps = append(ps, Part{Name: e.name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(e.body)), nil }})
	}
	return Parts(ps...)
}

var formats = map[string]func(*testing.T, []ent) Source{
	"zip":    zipOf,
	"tar.gz": tgzOf,
	"tar":    tarOf,
}

func read(t *testing.T, s blob.Store, key string) string {
	t.Helper()
	o, err := s.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRealisticSite(t *testing.T) {
	site := []ent{
		{name: "htmlcov/"},
		{name: "htmlcov/index.html", body: "<html>index</html>"},
		{name: "htmlcov/style_cb_8e611ae1.css", body: "body{}"},
		{name: "htmlcov/coverage_html_cb_6fb7b396.js", body: "var x;"},
		{name: "htmlcov/d_145eef247bfb46b6/"},
		{name: "htmlcov/d_145eef247bfb46b6/main_py.html", body: "<html>main</html>"},
		{name: "htmlcov/keybd_closed_cb_ce680311.png", body: "\x89PNG"},
		{name: "htmlcov/status.json", body: "{}"},
		{name: "htmlcov/fonts/x.woff2", body: "wOF2"},
	}
	want := []File{
		{Path: "coverage_html_cb_6fb7b396.js", Size: 6, ContentType: "text/javascript; charset=utf-8"},
		{Path: "d_145eef247bfb46b6/main_py.html", Size: 17, ContentType: "text/html; charset=utf-8"},
		{Path: "fonts/x.woff2", Size: 4, ContentType: "font/woff2"},
		{Path: "index.html", Size: 18, ContentType: "text/html; charset=utf-8"},
		{Path: "keybd_closed_cb_ce680311.png", Size: 4, ContentType: "image/png"},
		{Path: "status.json", Size: 2, ContentType: "application/json"},
		{Path: "style_cb_8e611ae1.css", Size: 6, ContentType: "text/css; charset=utf-8"},
	}
	tgz := func(t *testing.T, es []ent) Source {
		// git archive style: a pax global header and "./" names.
		es = append([]ent{{hdr: &tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "abc"}}}}, es...)
		for i := range es[1:] {
			es[i+1].name = "./" + es[i+1].name
		}
		return tgzOf(t, es)
	}
	srcs := map[string]func(*testing.T, []ent) Source{"zip": zipOf, "tar": tarOf, "tar.gz (git archive)": tgz,
		"parts": func(t *testing.T, es []ent) Source {
			var fs []ent
			for _, e := range es {
				if !strings.HasSuffix(e.name, "/") {
					fs = append(fs, e)
				}
			}
			return partsOf(fs)
		}}
	for name, mk := range srcs {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			m, err := e.ingest(t, mk(t, site), Options{ManifestKey: "sites/7.json"})
			if err != nil {
				t.Fatal(err)
			}
			if m.Version != 1 || m.Entry != "index.html" || m.TotalBytes != 57 {
				t.Errorf("manifest = %+v", m)
			}
			if len(m.Files) != len(want) {
				t.Fatalf("files = %+v", m.Files)
			}
			for i, f := range m.Files {
				w := want[i]
				if f.Path != w.Path || f.Size != w.Size || f.ContentType != w.ContentType || !isSHA256(f.SHA256) {
					t.Errorf("file %d = %+v, want %+v", i, f, w)
				}
			}
			f, ok := m.Lookup("d_145eef247bfb46b6/main_py.html")
			if !ok || read(t, e.store, f.Key()) != "<html>main</html>" {
				t.Errorf("Lookup main_py.html = %+v %v", f, ok)
			}
			if _, ok := m.Lookup("nope.html"); ok {
				t.Error("Lookup of a missing file succeeded")
			}
			got, err := Load(ctx, e.store, "sites/7.json")
			if err != nil {
				t.Fatal(err)
			}
			if m.Root != "htmlcov" {
				t.Errorf("Ingest's Root = %q, want the stripped top folder htmlcov", m.Root)
			}
			if raw := read(t, e.store, "sites/7.json"); m.SHA256 != sum([]byte(raw)) {
				t.Errorf("Ingest's SHA256 = %q, not the sha256 of the stored manifest", m.SHA256)
			}
			stored := m
			stored.Root, stored.SHA256 = "", "" // what Ingest saw, never stored
			if fmt.Sprint(got) != fmt.Sprint(stored) {
				t.Errorf("Load = %+v\nwant %+v", got, stored)
			}
			if ks := e.keys(t, ObjectPrefix); len(ks) != len(want) {
				t.Errorf("objects = %q", ks)
			}
			for _, f := range e.files(t) {
				if !strings.HasPrefix(f, "data/objects/") {
					t.Errorf("file outside the store: %s", f)
				}
			}
		})
	}
}

func TestEntryAndRoot(t *testing.T) {
	for _, c := range []struct {
		names       []string
		entry, root string
		want        string // entry
		wantFiles   string // first path
	}{
		{names: []string{"a/report.html", "a/index.html"}, want: "index.html", wantFiles: "index.html"},
		{names: []string{"mochawesome-report/mochawesome.html", "mochawesome-report/report.html"}, want: "mochawesome.html"},
		{names: []string{"report.html", "other.html"}, want: "report.html"},
		{names: []string{"x/only.HTM", "y.css"}, want: "x/only.HTM", wantFiles: "x/only.HTM"},
		{names: []string{"a.html", "b.html"}, want: ""},
		{names: []string{"a.css", "b.js"}, want: ""},
		{names: []string{"a.html", "b.html"}, entry: "b.html", want: "b.html"},
		{names: []string{"top/a/index.html", "top/a/b.css"}, want: "a/index.html", wantFiles: "a/b.css"},
		{names: []string{"top/a/index.html", "top/a/b.css"}, root: "top/a", want: "index.html", wantFiles: "b.css"},
		{names: []string{"top/a/index.html", "top/a/b.css"}, root: "top/a/", want: "index.html"},
		{names: []string{"top/index.html", "top/b.css"}, root: ".", want: "top/index.html", wantFiles: "top/b.css"},
		{names: []string{"index.html"}, want: "index.html"},
	} {
		e := newEnv(t)
		var es []ent
		for _, n := range c.names {
			es = append(es, ent{name: n, body: n})
		}
		m, err := e.ingest(t, zipOf(t, es), Options{Entry: c.entry, Root: c.root})
		if err != nil {
			t.Errorf("%v: %v", c.names, err)
			continue
		}
		if m.Entry != c.want {
			t.Errorf("%v entry %q root %q: entry = %q, want %q", c.names, c.entry, c.root, m.Entry, c.want)
		}
		if c.wantFiles != "" && m.Files[0].Path != c.wantFiles {
			t.Errorf("%v root %q: first file %q, want %q", c.names, c.root, m.Files[0].Path, c.wantFiles)
		}
	}
	for _, c := range []struct {
		entry, root, want string
	}{
		{entry: "missing.html", want: `entry "missing.html" is not a file of the site`},
		{entry: "../index.html", want: `entry "../index.html" is not a file`},
		{entry: "top/index.html", want: `entry "top/index.html" is not a file`}, // names are root-relative
		{root: "other", want: `root "other" is not a folder holding every file`},
		{root: "top/index.html", want: `root "top/index.html" is not a folder`},
		{root: "../top", want: `invalid root "../top"`},
	} {
		t.Run(c.want, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.ingest(t, zipOf(t, files("top/index.html", "x", "top/a.css", "y")), Options{Entry: c.entry, Root: c.root})
			refused(t, err, report.Validation, c.want)
			e.nothingStored(t)
		})
	}
}

// bigBody is n pseudo-random bytes (incompressible, deterministic).
func bigBody(seed uint64, n int) string {
	b := make([]byte, n)
	randomBytes(seed, b)
	return string(b)
}

// randomBytes fills b from a ChaCha8 stream seeded by seed: fast, unlike
// a byte at a time from a PRNG (which the race detector makes slower still).
func randomBytes(seed uint64, b []byte) {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	rand.NewChaCha8(key).Read(b)
}

func TestDedup(t *testing.T) {
	e := newEnv(t)
	trace := bigBody(1, 600<<10) // above the in-memory size: staged in TempDir
	site := func(results string) []ent {
		return []ent{
			{name: "playwright-report/index.html", body: "<html>" + results + "</html>"},
			{name: "playwright-report/trace/index.html", body: "<html>trace viewer</html>"},
			{name: "playwright-report/trace/sw.bundle.js", body: trace},
			{name: "playwright-report/trace/assets/app.css", body: "body{}"},
			{name: "playwright-report/data/empty.txt", body: ""},
		}
	}
	m1, err := e.ingest(t, tgzOf(t, site("run 1")), Options{ManifestKey: "sites/1.json"})
	if err != nil {
		t.Fatal(err)
	}
	first := e.keys(t, ObjectPrefix)
	if len(first) != 5 {
		t.Fatalf("first upload stored %d objects: %q", len(first), first)
	}
	m2, err := e.ingest(t, zipOf(t, site("run 2")), Options{ManifestKey: "sites/2.json"})
	if err != nil {
		t.Fatal(err)
	}
	second := e.keys(t, ObjectPrefix)
	if len(second) != 6 {
		t.Fatalf("second upload: %d objects, want 6 (only the changed file added): %q", len(second), second)
	}
	f, _ := m2.Lookup("trace/sw.bundle.js")
	if g, _ := m1.Lookup("trace/sw.bundle.js"); g.SHA256 != f.SHA256 || read(t, e.store, f.Key()) != trace {
		t.Error("the shared large file differs between the uploads")
	}
	if i1, _ := m1.Lookup("index.html"); read(t, e.store, i1.Key()) != "<html>run 1</html>" {
		t.Error("first index changed")
	}
	if ents, _ := e.tmpEntries(); len(ents) != 0 {
		t.Errorf("temp files left: %v", ents)
	}
	// The same upload again under a taken key stores nothing new.
	_, err = e.ingest(t, zipOf(t, site("run 3")), Options{ManifestKey: "sites/2.json"})
	if !errors.Is(err, blob.ErrExists) {
		t.Errorf("ingest to a taken manifest key: %v", err)
	}
	if ks := e.keys(t, ObjectPrefix); len(ks) != 6 {
		t.Errorf("refused ingest stored objects: %d", len(ks))
	}
}

func TestDeleteAndGC(t *testing.T) {
	e := newEnv(t)
	shared := files("r/trace/app.js", "shared js", "r/trace/app.css", "shared css")
	if _, err := e.ingest(t, zipOf(t, append(files("r/index.html", "one", "r/one.json", "1"), shared...)), Options{ManifestKey: "sites/1.json"}); err != nil {
		t.Fatal(err)
	}
	m2, err := e.ingest(t, zipOf(t, append(files("r/index.html", "two"), shared...)), Options{ManifestKey: "sites/2.json"})
	if err != nil {
		t.Fatal(err)
	}
	// An object an interrupted ingest left behind.
	orphan := strings.Repeat("ab", 32)
	if _, err := e.store.Put(ctx, ObjectKey(orphan), strings.NewReader("x"), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.keys(t, ObjectPrefix)); n != 6 {
		t.Fatalf("objects = %d, want 6", n)
	}
	if err := Delete(ctx, e.store, "sites/1.json"); err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, e.store, "sites/1.json"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if ks := e.keys(t, ManifestPrefix); !slices.Equal(ks, []string{"sites/2.json"}) {
		t.Fatalf("manifests = %q", ks)
	}

	// Within the grace period nothing goes.
	st, err := GC(ctx, e.store, GCOptions{Grace: time.Hour})
	if err != nil || st.Removed != 0 || st.Objects != 6 || st.Manifests != 1 {
		t.Fatalf("GC within grace = %+v, %v", st, err)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	st, err = GC(ctx, e.store, GCOptions{Grace: time.Hour, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if st.Removed != 3 || st.RemovedBytes != 3+1+1 {
		t.Errorf("GC = %+v, want 3 removed (index one, one.json, orphan)", st)
	}
	var want []string
	for _, f := range m2.Files {
		want = append(want, f.Key())
	}
	slices.Sort(want)
	if ks := e.keys(t, ObjectPrefix); !slices.Equal(ks, want) {
		t.Errorf("objects after GC = %q, want those of site 2 %q", ks, want)
	}
	for _, f := range m2.Files {
		read(t, e.store, f.Key())
	}

	// Other objects below sites/ (not .json) are not manifests.
	if _, err := e.store.Put(ctx, "sites/2/listing.html", strings.NewReader("<ul>"), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, err := GC(ctx, e.store, GCOptions{Grace: time.Hour, Now: later}); err != nil || st.Removed != 0 || st.Manifests != 1 {
		t.Errorf("GC with a non-manifest below sites/ = %+v, %v", st, err)
	}

	// A manifest GC cannot read stops it before it removes anything.
	if _, err := e.store.Put(ctx, "sites/bad.json", strings.NewReader("{"), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, e.store, "sites/2.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := GC(ctx, e.store, GCOptions{Grace: time.Hour, Now: later}); err == nil {
		t.Error("GC with an unreadable manifest succeeded")
	}
	if ks := e.keys(t, ObjectPrefix); len(ks) != len(want) {
		t.Errorf("GC removed objects despite an unreadable manifest: %q", ks)
	}
	for _, k := range []string{"other/x.json", "sites/x.html"} {
		if err := Delete(ctx, e.store, k); err == nil {
			t.Errorf("Delete(%q) accepted", k)
		}
		if _, err := e.ingest(t, zipOf(t, files("a.html", "x")), Options{ManifestKey: k}); err == nil {
			t.Errorf("Ingest to %q accepted", k)
		}
	}
}

var hostileNames = []string{
	"../x",
	"/abs",
	"/etc/passwd",
	"a/../../x",
	"a/./b",
	"a//b",
	`C:\x`,
	"C:/x",
	`a\..\..\x`,
	`dir\file.html`,
	"nul\x00.html",
	"ctl\x01.html",
	"c1\u0085.html",
	"bad\xff\xfe.html",
	strings.Repeat("a", 300) + ".html",
	strings.Repeat("a/", 600) + "x",
	"rep\u202elmth.pdf.html",
	"zero\u200bwidth.html",
	"docs/\u2066isolate\u2069/a.js",
}

// A bidi or zero-width character in a site's file name is refused as in a
// single file's name, naming the character.
func TestInvisibleNamesNamed(t *testing.T) {
	for name, want := range map[string]string{
		"rep\u202elmth.pdf.html":  "U+202E RIGHT-TO-LEFT OVERRIDE at byte 3",
		"a/zero\u200bwidth.html":  "U+200B ZERO WIDTH SPACE at byte 6",
		"\ufeffindex.html":        "U+FEFF ZERO WIDTH NO-BREAK SPACE at byte 0",
		"docs/\u2066isolate/a.js": "U+2066 LEFT-TO-RIGHT ISOLATE at byte 5",
	} {
		err := CheckName(name)
		refused(t, err, report.Validation, "invisible format character "+want)
		if single := report.CheckVisible("fileName", name); single == nil {
			t.Errorf("%q: accepted as a single file's name", name)
		}
	}
}

func TestHostileNames(t *testing.T) {
	for _, name := range hostileNames {
		for fname, mk := range formats {
			es := append(files("index.html", "ok"), ent{name: name, body: "evil"})
			if fname != "zip" && strings.ContainsRune(name, 0) {
				continue // tar cannot carry a NUL in a name
			}
			t.Run(fmt.Sprintf("%s/%.40q", fname, name), func(t *testing.T) {
				e := newEnv(t)
				_, err := e.ingest(t, mk(t, es), Options{})
				refused(t, err, report.Validation, fmt.Sprintf("invalid file name %q", name))
				e.nothingStored(t)
			})
		}
		t.Run(fmt.Sprintf("parts/%.40q", name), func(t *testing.T) {
			e := newEnv(t)
			_, err := e.ingest(t, partsOf(append(files("index.html", "ok"), ent{name: name, body: "evil"})), Options{})
			refused(t, err, report.Validation, fmt.Sprintf("invalid file name %q", name))
			e.nothingStored(t)
		})
	}
	// "./" prefixes (tar -C dir .) are the one tolerated non-canonical form.
	e := newEnv(t)
	m, err := e.ingest(t, tarOf(t, files("./", "", "./index.html", "x", "././a/b.css", "y")), Options{})
	if err != nil || m.Files[0].Path != "a/b.css" {
		t.Errorf("./ names: %+v, %v", m, err)
	}
}

func TestHostileEntryTypes(t *testing.T) {
	for _, c := range []struct {
		name string
		src  func(t *testing.T) Source
		want string
	}{
		{"tar symlink", func(t *testing.T) Source {
			return tgzOf(t, []ent{{name: "index.html", body: "x"}, {hdr: &tar.Header{Name: "passwd", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}})
		}, `entry "passwd" is a symbolic link`},
		{"tar symlink dir then file through it", func(t *testing.T) Source {
			return tarOf(t, []ent{{hdr: &tar.Header{Name: "d", Typeflag: tar.TypeSymlink, Linkname: "/tmp"}}, {name: "d/x", body: "evil"}})
		}, `entry "d" is a symbolic link`},
		{"tar hardlink", func(t *testing.T) Source {
			return tgzOf(t, []ent{{name: "index.html", body: "x"}, {hdr: &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"}}})
		}, `entry "h" is a hard link`},
		{"tar char device", func(t *testing.T) Source {
			return tarOf(t, []ent{{hdr: &tar.Header{Name: "null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}}})
		}, `entry "null" is a device file`},
		{"tar block device", func(t *testing.T) Source {
			return tgzOf(t, []ent{{hdr: &tar.Header{Name: "sda", Typeflag: tar.TypeBlock, Devmajor: 8}}})
		}, `entry "sda" is a device file`},
		{"tar fifo", func(t *testing.T) Source {
			return tgzOf(t, []ent{{name: "index.html", body: "x"}, {hdr: &tar.Header{Name: "pipe", Typeflag: tar.TypeFifo}}})
		}, `entry "pipe" is a named pipe`},
		{"tar folder with content", func(t *testing.T) Source {
			b := tarBytes(t, false, []ent{{name: "d/"}})
			// Give the folder a size field the reader would skip over.
			copy(b[124:136], fmt.Sprintf("%011o\x00", 1<<20))
			sum := 0
			for i, c := range b[:512] {
				if i >= 148 && i < 156 {
					c = ' '
				}
				sum += int(c)
			}
			copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
			b = append(b[:512], make([]byte, 1<<20+1024)...)
			return Tar(bytes.NewReader(b), int64(len(b)))
		}, `entry "d/" is a folder with content`},
		{"zip symlink", func(t *testing.T) Source {
			return zipOf(t, []ent{{name: "index.html", body: "x"}, {name: "link", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}})
		}, `entry "link" is a symbolic link`},
		{"zip device", func(t *testing.T) Source {
			return zipOf(t, []ent{{name: "dev", body: "", mode: fs.ModeDevice | 0o644}})
		}, `entry "dev" is not a regular file`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.ingest(t, c.src(t), Options{})
			refused(t, err, report.Validation, c.want)
			e.nothingStored(t)
		})
	}
}

func TestCollisions(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"a.html", "a.html"}, `duplicate file name "a.html"`},
		{[]string{"x/a.html", "./x/a.html"}, `duplicate file name "x/a.html"`},
		{[]string{"A.html", "a.html"}, `file names "A.html" and "a.html" collide: they differ only in case`},
		{[]string{"Dir/a.css", "dir/b.css"}, `folder names "Dir" and "dir" collide`},
		{[]string{"a", "a/b"}, `"a" is both a file and the folder of "a/b"`},
		{[]string{"a/b", "A"}, `"A" is both a file and a folder`},
		{[]string{"Straße.html", "STRASSE.html"}, `differ only in case`},
		{[]string{"caf\u00e9.html", "cafe\u0301.html"}, `differ only in case or Unicode form`},
	} {
		for fname, mk := range formats {
			t.Run(fname+"/"+strings.Join(c.names, "+"), func(t *testing.T) {
				e := newEnv(t)
				var es []ent
				for _, n := range c.names {
					es = append(es, ent{name: n, body: n})
				}
				_, err := e.ingest(t, mk(t, es), Options{})
				refused(t, err, report.Validation, c.want)
				e.nothingStored(t)
			})
		}
	}
}

func manyEntries(n int) []ent {
	es := make([]ent, n)
	for i := range es {
		es[i] = ent{name: fmt.Sprintf("f/%06d.txt", i)}
	}
	return es
}

func TestTooManyEntries(t *testing.T) {
	for fname, mk := range formats {
		t.Run(fname, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.ingest(t, mk(t, manyEntries(51)), Options{MaxEntries: 50})
			refused(t, err, report.PayloadTooLarge, "more than 50 entries")
			e.nothingStored(t)
			if _, err := e.ingest(t, mk(t, manyEntries(50)), Options{MaxEntries: 50}); err != nil {
				t.Errorf("50 entries at MaxEntries 50: %v", err)
			}
		})
	}
	t.Run("parts", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.ingest(t, partsOf(manyEntries(11)), Options{MaxEntries: 10})
		refused(t, err, report.PayloadTooLarge, "more than 10 entries")
		e.nothingStored(t)
	})
	t.Run("folders count", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.ingest(t, tgzOf(t, append(files("a/", "", "b/", "", "c/", ""), manyEntries(2)...)), Options{MaxEntries: 4})
		refused(t, err, report.PayloadTooLarge, "more than 4 entries")
	})
}

// One entry over the default limit (100,000 tiny entries and one more):
// refused before a byte is stored, in bounded time.
func TestTwoHundredThousandEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100k-entry archives")
	}
	es := manyEntries(100_001)
	for _, fname := range []string{"zip", "tar.gz"} {
		t.Run(fname, func(t *testing.T) {
			t.Parallel()
			src := formats[fname](t, es)
			e := newEnv(t)
			start := time.Now()
			_, err := e.ingest(t, src, Options{})
			refused(t, err, report.PayloadTooLarge, "more than 100000 entries")
			// A bound for a hang or a pass that grows without limit, not a
			// speed figure: a loaded machine under -race takes 30 s here.
			if d := time.Since(start); d > 3*time.Minute {
				t.Errorf("refusal took %v", d)
			}
			e.nothingStored(t)
		})
	}
}

// zeros streams n zero bytes.
type zeros int64

func (z *zeros) Read(p []byte) (int, error) {
	if *z <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), int64(*z))
	clear(p[:n])
	*z -= zeros(n)
	return int(n), nil
}

// bombSize is a bomb's expanded size: far over the 200x ratio above the
// floor, and over the 10 MiB MaxBytes of the raised-ratio case.
const bombSize = 16 << 20

// The bombs are built once: deflating them is most of TestBombs' time.
var (
	bombZipBytes = sync.OnceValue(func() []byte { return buildBombZip(files("index.html", "x")) })
	bareBombZip  = sync.OnceValue(func() []byte { return buildBombZip(nil) })
	bombTgzBytes = sync.OnceValue(buildBombTgz)
)

func bytesZip(b []byte) Source { return Zip(bytes.NewReader(b), int64(len(b))) }

// buildBombZip is a zip whose last entry is bombSize of zeros, compressed as
// it is written (only the small result is held), after extra's entries.
func buildBombZip(extra []ent) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range extra {
		w, _ := zw.Create(e.name)
		io.WriteString(w, e.body)
	}
	w, _ := zw.Create("bomb.bin")
	z := zeros(bombSize)
	io.Copy(w, &z)
	zw.Close()
	return b.Bytes()
}

func bombTgz(t *testing.T) Source {
	b := bombTgzBytes()
	return TarGz(bytes.NewReader(b), int64(len(b)))
}

func buildBombTgz() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "index.html", Typeflag: tar.TypeReg, Size: 2})
	io.WriteString(tw, "hi")
	tw.WriteHeader(&tar.Header{Name: "bomb.bin", Typeflag: tar.TypeReg, Size: bombSize})
	z := zeros(bombSize)
	io.Copy(tw, &z)
	tw.Close()
	zw.Close()
	return b.Bytes()
}

// overlapZip is a zip whose central directory names the same compressed
// data many times (a non-recursive bomb): each entry alone is modest.
func overlapZip(t *testing.T) Source {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("a.bin")
	z := zeros(150 << 10) // under the floor: fine alone
	io.Copy(w, &z)
	zw.Close()
	data := b.Bytes()
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	f := r.File[0]
	off, _ := f.DataOffset()
	cdStart := bytes.LastIndex(data, []byte("PK\x01\x02"))
	local := data[:cdStart] // local header, data, data descriptor
	if int64(len(local)) < off+int64(f.CompressedSize64) {
		t.Fatal("unexpected zip layout")
	}
	// Central directory: 2000 records pointing at the same local header.
	var cd bytes.Buffer
	rec := data[cdStart:bytes.LastIndex(data, []byte("PK\x05\x06"))]
	const n = 2000
	for i := range n {
		r := bytes.Clone(rec)
		name := fmt.Sprintf("%05d", i)
		copy(r[46:], name) // "a.bin" is five bytes too
		cd.Write(r)
	}
	eocd := make([]byte, 22)
	copy(eocd, "PK\x05\x06")
	put16 := func(b []byte, v int) { b[0], b[1] = byte(v), byte(v>>8) }
	put32 := func(b []byte, v int) { put16(b, v&0xffff); put16(b[2:], v>>16) }
	put16(eocd[8:], n)
	put16(eocd[10:], n)
	put32(eocd[12:], cd.Len())
	put32(eocd[16:], len(local))
	out := append(append(bytes.Clone(local), cd.Bytes()...), eocd...)
	return Zip(bytes.NewReader(out), int64(len(out)))
}

func TestBombs(t *testing.T) {
	for _, c := range []struct {
		name string
		src  func(t *testing.T) Source
		opt  Options
		kind report.Kind
		want string
	}{
		{"zip ratio", func(t *testing.T) Source { return bytesZip(bombZipBytes()) }, Options{}, report.Validation, `entry "bomb.bin" expands more than 200 times its compressed size`},
		{"tar.gz ratio", bombTgz, Options{}, report.Validation, "expands more than 200 times its size"},
		{"zip overlapping entries", overlapZip, Options{}, report.Validation, "expands more than 200 times its size"},
		{"zip absolute", func(t *testing.T) Source {
			return zipOf(t, []ent{{name: "a.bin", body: bigBody(1, 600<<10)}, {name: "b.bin", body: bigBody(2, 600<<10)}})
		}, Options{MaxBytes: 1 << 20}, report.PayloadTooLarge, `the site expands to more than 1048576 bytes (at "b.bin")`},
		{"tar.gz absolute", func(t *testing.T) Source {
			return tgzOf(t, []ent{{name: "a.bin", body: bigBody(1, 600<<10)}, {name: "b.bin", body: bigBody(2, 600<<10)}})
		}, Options{MaxBytes: 1 << 20}, report.PayloadTooLarge, `(at "b.bin")`},
		{"parts absolute", func(t *testing.T) Source {
			return partsOf([]ent{{name: "a.bin", body: bigBody(1, 600<<10)}, {name: "b.bin", body: bigBody(2, 600<<10)}})
		}, Options{MaxBytes: 1 << 20}, report.PayloadTooLarge, `(at "b.bin")`},
		{"zip ratio bomb under a raised ratio hits the size", func(t *testing.T) Source { return bytesZip(bareBombZip()) }, Options{MaxRatio: 1 << 20, MaxBytes: 10 << 20}, report.PayloadTooLarge, "more than 10485760 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := c.src(t)
			e := newEnv(t)
			start := time.Now()
			_, err := e.ingest(t, src, c.opt)
			refused(t, err, c.kind, c.want)
			e.nothingStored(t)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("refusal took %v", d)
			}
		})
	}
	// Small, very compressible files pass: the ratio applies above the floor.
	e := newEnv(t)
	z := zeros(900 << 10)
	zs, _ := io.ReadAll(&z)
	if _, err := e.ingest(t, zipOf(t, []ent{{name: "index.html", body: strings.Repeat("<p>", 1000)}, {name: "zeros.bin", body: string(zs)}}), Options{}); err != nil {
		t.Errorf("small compressible site refused: %v", err)
	}
}

func TestDamaged(t *testing.T) {
	site := append(files("index.html", "<html>hello</html>"), ent{name: "big.js", body: bigBody(3, 64<<10)})
	zb := func() []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for _, e := range site {
			w, _ := zw.Create(e.name)
			io.WriteString(w, e.body)
		}
		zw.Close()
		return b.Bytes()
	}()
	gz := tarBytes(t, true, site)
	raw := tarBytes(t, false, site)
	corrupt := bytes.Clone(zb)
	corrupt[len(corrupt)/3] ^= 0xff // inside big.js's deflate data
	for _, c := range []struct {
		name string
		src  Source
		want string
	}{
		{"zip truncated", Zip(bytes.NewReader(zb[:len(zb)-30]), int64(len(zb)-30)), "not a readable zip archive"},
		{"zip cut in half", Zip(bytes.NewReader(zb[:len(zb)/2]), int64(len(zb)/2)), "not a readable zip archive"},
		{"zip corrupt data", Zip(bytes.NewReader(corrupt), int64(len(corrupt))), `damaged or truncated at "big.js"`},
		{"tar.gz cut in half", TarGz(bytes.NewReader(gz[:len(gz)/2]), int64(len(gz)/2)), "the tar.gz archive is damaged or truncated"},
		{"tar.gz without its trailer", TarGz(bytes.NewReader(gz[:len(gz)-4]), int64(len(gz)-4)), "damaged or truncated"},
		{"tar.gz empty", TarGz(bytes.NewReader(nil), 0), "not a readable gzip file"},
		{"tar cut in a file", Tar(bytes.NewReader(raw[:3000]), 3000), `the tar archive is damaged or truncated at "big.js"`},
		{"tar cut in a header", Tar(bytes.NewReader(raw[:1500]), 1500), `the tar archive is damaged or truncated after "index.html"`},
		{"not an archive", Zip(strings.NewReader("hello, world"), 12), "not a readable zip archive"},
		{"empty tar", Tar(bytes.NewReader(make([]byte, 1024)), 1024), "the site holds no files"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.ingest(t, c.src, Options{})
			refused(t, err, report.Validation, c.want)
			e.nothingStored(t)
		})
	}
}

// A large file streams through a bounded amount of memory.
func TestStreamsLargeFiles(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "site.tar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	const size = 48 << 20
	tw := tar.NewWriter(f)
	tw.WriteHeader(&tar.Header{Name: "r/index.html", Typeflag: tar.TypeReg, Size: 2})
	io.WriteString(tw, "hi")
	tw.WriteHeader(&tar.Header{Name: "r/video.webm", Typeflag: tar.TypeReg, Size: size})
	buf := make([]byte, 1<<20)
	for i := range size / len(buf) {
		randomBytes(uint64(9+i), buf)
		tw.Write(buf)
	}
	tw.Close()
	fi, _ := f.Stat()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := e.ingest(t, Tar(f, fi.Size()), Options{})
	runtime.ReadMemStats(&after)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m.Lookup("video.webm"); !ok || v.Size != size || v.ContentType != "video/webm" {
		t.Errorf("video = %+v", v)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("ingest of a %d MiB file allocated %d MiB", size>>20, alloc>>20)
	}
	if ents, _ := e.tmpEntries(); len(ents) != 0 {
		t.Errorf("temp files left: %v", ents)
	}
}

func TestCheckName(t *testing.T) {
	for _, n := range []string{"a", "index.html", "a/b/c.js", ".nojekyll", "a..b", "ü/ß.html", "a b/c d.html", "C", "1:2", "x/C:"} {
		if err := CheckName(n); err != nil {
			t.Errorf("CheckName(%q) = %v", n, err)
		}
	}
	for _, n := range append(hostileNames, "", ".", "..", "a/", "a/.", "./a", "c:") {
		if err := CheckName(n); !report.IsKind(err, report.Validation) {
			t.Errorf("CheckName(%q) = %v, want a ValidationError", n, err)
		}
	}
}

func TestContentType(t *testing.T) {
	for n, want := range map[string]string{
		"a.html": "text/html; charset=utf-8", "A.HTML": "text/html; charset=utf-8", "x.css": "text/css; charset=utf-8",
		"x.js": "text/javascript; charset=utf-8", "x.mjs": "text/javascript; charset=utf-8", "x.json": "application/json",
		"x.svg": "image/svg+xml", "x.png": "image/png", "x.jpg": "image/jpeg", "x.gif": "image/gif", "x.webp": "image/webp",
		"x.ico": "image/vnd.microsoft.icon", "x.woff": "font/woff", "x.woff2": "font/woff2", "x.ttf": "font/ttf",
		"x.txt": "text/plain; charset=utf-8", "x.xml": "application/xml", "x.js.map": "application/json",
		"x.wasm": "application/wasm", "trace.zip": "application/zip", "v.webm": "video/webm", "v.mp4": "video/mp4",
		"noext": "application/octet-stream", "x.exe": "application/octet-stream",
	} {
		if got := ContentType(n); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", n, got, want)
		}
		// ContentTypes lists every type ContentType gives, once.
		if types := ContentTypes(); !slices.Contains(types, want) || len(slices.Compact(slices.Sorted(slices.Values(types)))) != len(types) {
			t.Errorf("ContentTypes() = %q: want %q in it once", types, want)
		}
	}
}

func TestListing(t *testing.T) {
	m := Manifest{Files: []File{
		{Path: `<script>alert(1)</script>.html`, Size: 3},
		{Path: `a "b"/c&d.txt`, Size: 4},
		{Path: "javascript:alert(1)", Size: 5},
	}}
	out := string(Listing(m))
	for _, bad := range []string{"<script>", `"b"`, `href="javascript:`} {
		if strings.Contains(out, bad) {
			t.Errorf("listing contains %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{
		`<a href="%3Cscript%3Ealert%281%29%3C/script%3E.html">&lt;script&gt;alert(1)&lt;/script&gt;.html</a>`,
		`<a href="a%20%22b%22/c&amp;d.txt">a &#34;b&#34;/c&amp;d.txt</a>`,
		`href="./javascript:alert%281%29"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %s:\n%s", want, out)
		}
	}
}

// plain hides the local store's fast paths (Adopter, Copier, …), as a
// store without them (S3) would be used: large files go through Put.
type plain struct{ blob.Store }

// failing fails every Put after the first n.
type failing struct {
	blob.Store
	mu sync.Mutex
	n  int
}

func (f *failing) Put(ctx context.Context, k string, r io.Reader, o blob.PutOptions) (blob.Info, error) {
	f.mu.Lock()
	if f.n <= 0 {
		f.mu.Unlock()
		return blob.Info{}, blob.StorageErr(errors.New("disk full"), "cannot store the file")
	}
	f.n--
	f.mu.Unlock()
	// A granted Put completes even if a later one's failure cancels the
	// ingest meanwhile, so exactly n objects are stored.
	return f.Store.Put(context.WithoutCancel(ctx), k, r, o)
}

func TestWithoutFastPaths(t *testing.T) {
	e := newEnv(t)
	big := bigBody(4, 700<<10)
	m, err := Ingest(ctx, plain{e.store}, zipOf(t, files("r/index.html", "x", "r/big.js", big)), e.opt("sites/1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := m.Lookup("big.js"); read(t, e.store, f.Key()) != big {
		t.Error("large file differs")
	}
	if ents, _ := e.tmpEntries(); len(ents) != 0 {
		t.Errorf("temp files left: %v", ents)
	}
}

// An ingest that fails while storing (a store error, a cancelled request)
// leaves no manifest; GC removes what it had stored once the grace ends.
func TestFailedIngestLeavesNoManifest(t *testing.T) {
	site := files("r/index.html", "x", "r/a.css", "a", "r/b.js", "b", "r/big.bin", bigBody(5, 300<<10))
	later := func() time.Time { return time.Now().Add(25 * time.Hour) }
	t.Run("store error", func(t *testing.T) {
		e := newEnv(t)
		_, err := Ingest(ctx, &failing{Store: e.store, n: 2}, tgzOf(t, site), e.opt("sites/1.json"))
		if !report.IsKind(err, report.Storage) {
			t.Fatalf("err = %v, want a StorageError", err)
		}
		if ks := e.keys(t, ManifestPrefix); len(ks) != 0 {
			t.Fatalf("manifest left: %q", ks)
		}
		if ks := e.keys(t, ObjectPrefix); len(ks) != 2 {
			t.Fatalf("objects = %q, want the 2 stored before the failure", ks)
		}
		if st, err := GC(ctx, e.store, GCOptions{Now: later}); err != nil || st.Removed != 2 {
			t.Fatalf("GC = %+v, %v", st, err)
		}
		if ents, _ := e.tmpEntries(); len(ents) != 0 {
			t.Errorf("temp files left: %v", ents)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		e := newEnv(t)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		opens := 0
		var ps []Part
		for _, f := range site {
			ps = append(ps, Part{Name: f.name, Open: func() (io.ReadCloser, error) {
				if opens++; opens == 2 { // the local store's batch stores in one pass
					cancel()
				}
				return io.NopCloser(strings.NewReader(f.body)), nil
			}})
		}
		_, err := Ingest(cctx, e.store, Parts(ps...), e.opt("sites/1.json"))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if ks := e.keys(t, ManifestPrefix); len(ks) != 0 {
			t.Fatalf("manifest left: %q", ks)
		}
		// The local store's batch makes nothing visible before it
		// commits; without it, at most the file queued before the cancel.
		if ks := e.keys(t, ObjectPrefix); len(ks) > 1 {
			t.Errorf("objects = %q, want at most the one queued before the cancel", ks)
		}
		if ents, _ := e.tmpEntries(); len(ents) != 0 {
			t.Errorf("temp files left: %v", ents)
		}
	})
}

// Concurrent ingests of one site under different keys all succeed and
// share every object.
func TestConcurrentIngests(t *testing.T) {
	e := newEnv(t)
	site := files("r/index.html", "x", "r/a.css", "a", "r/big.bin", bigBody(6, 300<<10))
	src := zipOf(t, site) // one staged archive, read concurrently
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			_, err := Ingest(ctx, e.store, src, e.opt(ManifestKey(fmt.Sprint(i))))
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if ks := e.keys(t, ObjectPrefix); len(ks) != 3 {
		t.Errorf("objects = %q, want 3", ks)
	}
	if ks := e.keys(t, ManifestPrefix); len(ks) != 4 {
		t.Errorf("manifests = %q, want 4", ks)
	}
}
