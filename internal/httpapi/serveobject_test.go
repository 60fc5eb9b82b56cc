package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/local"
)

// readFromRecorder notes what ServeContent hands the connection's ReadFrom:
// a *os.File inside the LimitedReader is what sendfile(2) needs.
type readFromRecorder struct {
	*httptest.ResponseRecorder
	osFile bool
}

func (w *readFromRecorder) ReadFrom(src io.Reader) (int64, error) {
	if lr, ok := src.(*io.LimitedReader); ok {
		_, w.osFile = lr.R.(*os.File)
	}
	return io.Copy(w.ResponseRecorder, src)
}

// objectOnly hides the *os.File of a local object, as any other store's
// object would come.
type objectOnly struct{ o blob.Object }

func (p objectOnly) Read(b []byte) (int, error)                { return p.o.Read(b) }
func (p objectOnly) ReadAt(b []byte, off int64) (int, error)   { return p.o.ReadAt(b, off) }
func (p objectOnly) Seek(off int64, whence int) (int64, error) { return p.o.Seek(off, whence) }
func (p objectOnly) Close() error                              { return p.o.Close() }
func (p objectOnly) Info() blob.Info                           { return p.o.Info() }

// A local object goes to ServeContent as its *os.File (sendfile); any
// other object serves the same bytes, ranges and headers by Read and Seek.
func TestServeObject(t *testing.T) {
	d := t.TempDir()
	st, err := local.Open(filepath.Join(d, "uploads"), filepath.Join(d, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	body := strings.Repeat("<p>report</p>", 1000)
	if _, err := st.Put(ctx, "reports/1.html", strings.NewReader(body), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	for _, wrap := range []bool{false, true} {
		for _, rng := range []string{"", "bytes=13-25"} {
			o, err := st.Open(ctx, "reports/1.html")
			if err != nil {
				t.Fatal(err)
			}
			var obj blob.Object = o
			if wrap {
				obj = objectOnly{o}
			}
			w := &readFromRecorder{ResponseRecorder: httptest.NewRecorder()}
			r := httptest.NewRequest("GET", "/api/reports/1/preview", nil)
			if rng != "" {
				r.Header.Set("Range", rng)
			}
			s.serveObject(w, r, obj, "text/html; charset=utf-8", "inline", "abc-html")
			obj.Close()
			want, code := body, http.StatusOK
			if rng != "" {
				want, code = body[13:26], http.StatusPartialContent
			}
			if w.Code != code || w.Body.String() != want {
				t.Errorf("wrapped=%v range %q: %d, %d bytes", wrap, rng, w.Code, w.Body.Len())
			}
			if w.osFile == wrap {
				t.Errorf("wrapped=%v: ReadFrom got an *os.File: %v", wrap, w.osFile)
			}
			h := w.Header()
			if h.Get("Content-Security-Policy") != "sandbox" || h.Get("ETag") != `"abc-html"` || h.Get("Content-Disposition") != "inline" ||
				h.Get("Cache-Control") != "no-cache" || h.Get("Last-Modified") == "" || h.Get("Accept-Ranges") != "bytes" {
				t.Errorf("wrapped=%v range %q: headers %v", wrap, rng, h)
			}
		}
	}
}
