package site

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/blob/local"
)

// coverageTgz synthesizes a coverage.py-like htmlcov/ of n module pages
// (about 6 KiB of table rows each) plus its shared assets, as .tar.gz.
func coverageTgz(b *testing.B, n int) []byte {
	b.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name, body string) {
		if err := tw.WriteHeader(&tar.Header{Name: "htmlcov/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			b.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	add("style.css", strings.Repeat(".pln{color:#000}\n", 700))
	add("coverage_html.js", strings.Repeat("function sortColumn(th){return th.cellIndex}\n", 500))
	add("favicon_32.png", "\x89PNG\r\n\x1a\n"+strings.Repeat("\x00", 1500))
	var ix strings.Builder
	for i := range n {
		var p strings.Builder
		fmt.Fprintf(&p, "<!DOCTYPE html><html><head><title>Coverage for pkg/m%05d.py</title></head><body>\n", i)
		for l := range 60 {
			fmt.Fprintf(&p, "<p class=\"run\"><span class=\"n\"><a id=\"t%d\" href=\"#t%d\">%d</a></span><span class=\"t\">    return x * %d</span></p>\n", l, l, l, i+l)
		}
		p.WriteString("</body></html>\n")
		add(fmt.Sprintf("d_%08x_m%05d_py.html", i*2654435761%(1<<32), i), p.String())
		fmt.Fprintf(&ix, "<tr><td><a href=\"d_%08x_m%05d_py.html\">pkg/m%05d.py</a></td><td>%d%%</td></tr>\n", i*2654435761%(1<<32), i, i, i%100)
	}
	add("index.html", "<!DOCTYPE html><table>\n"+ix.String()+"</table>\n")
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

// BenchmarkIngestCoverage publishes a synthesized 2,000-page coverage.py
// site into a fresh local store per iteration (profile it with
// -cpuprofile).
func BenchmarkIngestCoverage(b *testing.B) {
	tgz := coverageTgz(b, 2000)
	b.SetBytes(int64(len(tgz)))
	base := b.TempDir()
	for i := 0; b.Loop(); i++ {
		dir := filepath.Join(base, fmt.Sprint(i))
		st, err := local.Open(filepath.Join(dir, "objects"), filepath.Join(dir, "tmp"))
		if err != nil {
			b.Fatal(err)
		}
		_, err = Ingest(ctx, st, TarGz(bytes.NewReader(tgz), int64(len(tgz))), Options{ManifestKey: "sites/1.json", TempDir: filepath.Join(dir, "tmp")})
		st.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(dir)
		b.StartTimer()
	}
}
