package httpapi_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// Security properties from issue 6, each proven against the real stack
// (bbolt store, data directory, service, HTTP handler) over loopback.
// Slow-header clients are cut off by the daemon's http.Server, so that
// test lives in internal/daemon (TestSlowHeadersCutOff).

func secErrorType(t *testing.T, r *apitest.Response) string {
	t.Helper()
	var body struct{ Error, Type string }
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Type == "" || !strings.HasPrefix(body.Error, body.Type+": ") {
		t.Fatalf("%s %s: not an {error, type} body: %d %s", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Body)
	}
	return body.Type
}

func TestSecurityUploadedHTMLIsSandboxed(t *testing.T) {
	for _, scripts := range []bool{false, true} {
		t.Run(fmt.Sprintf("html_allow_scripts=%v", scripts), func(t *testing.T) {
			e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.HTMLScripts = scripts }})
			p := e.CreateProject("xss")
			evil := []byte(`<html><body><script>fetch("/api/projects",{method:"DELETE"})</script></body></html>`)
			html := e.MustUpload(p.ID, "evil.html", report.HTML, evil)
			md := e.MustUpload(p.ID, "evil.md", report.MD, []byte("# hi\n<script>alert(1)</script>\n"))
			want := "sandbox"
			if scripts {
				want = "sandbox allow-scripts"
			}
			for _, path := range []string{
				fmt.Sprintf("/api/reports/%d/preview", html.ID),
				html.FilePath, // static /uploads/reports/<id>.html
				fmt.Sprintf("/api/reports/%d/download", html.ID),
				fmt.Sprintf("/api/reports/%d/preview", md.ID),
				md.FilePath,
			} {
				r := e.Get(path)
				if r.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %d", path, r.StatusCode)
				}
				csp := r.Header.Get("Content-Security-Policy")
				if csp != want {
					t.Errorf("GET %s: Content-Security-Policy %q, want %q", path, csp, want)
				}
				if strings.Contains(csp, "allow-same-origin") {
					t.Errorf("GET %s: sandbox allows the daemon's origin", path)
				}
				if r.Header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("GET %s: no nosniff", path)
				}
			}
			// Every response, errors included, forbids sniffing.
			if r := e.Get("/api/reports/999/preview"); r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("error response without nosniff")
			}
		})
	}
}

// pngServer serves a valid PNG at any path; hits counts requests.
func pngServer(t *testing.T, ln net.Listener, hits *atomic.Int64) *httptest.Server {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		w.Write(apitest.PNG())
	}))
	if ln != nil {
		s.Listener.Close()
		s.Listener = ln
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func TestSecurityCoverURLToInternalAddressesRefused(t *testing.T) {
	var hits atomic.Int64
	internal := pngServer(t, nil, &hits) // 127.0.0.1
	port := internal.Listener.Addr().(*net.TCPAddr).Port
	e := apitest.Start(t, apitest.Options{})
	for _, u := range []string{
		internal.URL + "/cover.png",
		fmt.Sprintf("http://localhost:%d/cover.png", port),
		fmt.Sprintf("http://[::1]:%d/cover.png", port),
		fmt.Sprintf("http://127.1.2.3:%d/cover.png", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/cover.png", port),
		"http://10.1.2.3/cover.png",       // private
		"http://192.168.1.1/cover.png",    // private
		"http://172.16.0.1/cover.png",     // private
		"http://169.254.169.254/latest/x", // link-local (cloud metadata)
		"http://[fe80::1]/cover.png",      // link-local
		"http://0.0.0.0:80/cover.png",     // unspecified
		"http://100.64.0.1/cover.png",     // carrier-grade NAT
		"http://[fd00::1]/cover.png",      // unique local
	} {
		before := e.Tree()
		r := e.PostJSON("POST", "/api/projects", map[string]any{"name": "ssrf", "coverImage": u})
		if typ := secErrorType(t, r); typ != string(report.Validation) {
			t.Errorf("cover %s: %s, want ValidationError", u, typ)
		}
		if after := e.Tree(); len(after) != len(before) {
			t.Errorf("cover %s: files changed %v -> %v", u, before, after)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the internal server was contacted %d times", n)
	}
	var list []report.Project
	e.Get("/api/projects").JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("refused covers created %d projects", len(list))
	}

	// Control: the same URL works when private targets are allowed, so the
	// refusals above are the guard's doing, not a broken fetch.
	ok := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.CoverFetch.AllowPrivate = true }})
	if r := ok.PostJSON("POST", "/api/projects", map[string]any{"name": "ok", "coverImage": internal.URL + "/c.png"}); r.StatusCode != http.StatusCreated {
		t.Fatalf("allowed cover: %d %s", r.StatusCode, r.Body)
	}
}

// TestSecurityCoverRedirectToInternalRefused proves the guard checks every
// hop, not only the URL given. Tests may use loopback only, so the policy
// here treats 127.0.0.1 as "public" and the rest of 127.0.0.0/8 as internal:
// a first hop on 127.0.0.1 redirects to 127.0.0.2, which must be refused
// without being contacted.
func TestSecurityCoverRedirectToInternalRefused(t *testing.T) {
	var internalHits, publicHits atomic.Int64
	iln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	internal := pngServer(t, iln, &internalHits)
	direct := pngServer(t, nil, &publicHits)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		publicHits.Add(1)
		http.Redirect(w, r, internal.URL+"/cover.png", http.StatusFound)
	}))
	defer redirector.Close()

	onlyFirstHop := func(ip net.IP) bool { return ip.Equal(net.IPv4(127, 0, 0, 1)) }
	e := apitest.Start(t, apitest.Options{Service: func(s *service.Config) { s.CoverAddrAllowed = onlyFirstHop }})
	// Control: the allowed address itself works.
	if r := e.PostJSON("POST", "/api/projects", map[string]any{"name": "direct", "coverImage": direct.URL + "/c.png"}); r.StatusCode != http.StatusCreated {
		t.Fatalf("cover from %s: %d %s", direct.URL, r.StatusCode, r.Body)
	}
	before := e.Tree()
	r := e.PostJSON("POST", "/api/projects", map[string]any{"name": "redirect", "coverImage": redirector.URL + "/go"})
	if typ := secErrorType(t, r); typ != string(report.Validation) {
		t.Errorf("redirect to an internal address: %s %s", typ, r.Body)
	}
	if !strings.Contains(string(r.Body), "loopback") {
		t.Errorf("refusal does not say why: %s", r.Body)
	}
	if publicHits.Load() < 2 || internalHits.Load() != 0 {
		t.Fatalf("allowed servers hit %d times (want the direct fetch and the redirect), internal %d (want 0)", publicHits.Load(), internalHits.Load())
	}
	if after := e.Tree(); len(after) != len(before) {
		t.Errorf("refused redirect changed files: %v -> %v", before, after)
	}
}

// endless yields n bytes of Markdown without holding them, and counts what
// the transport actually read.
type endless struct {
	n    int64
	read atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	done := e.read.Load()
	if done >= e.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), e.n-done)
	for i := range p[:k] {
		p[i] = 'a' + byte((done+int64(i))%26)
	}
	e.read.Add(k)
	return int(k), nil
}

func TestSecurityOversizedBodiesCutOff(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.MaxUploadBytes = 1 << 20 }, HTTP: func(h *httpapi.Config) { h.MaxJSONBytes = 64 << 10 }})
	p := e.CreateProject("big")
	before := e.Tree()

	// A 256 MiB upload against a 1 MiB limit: refused, and the daemon stops
	// reading long before the end (the client is not made to send it all).
	const total = 256 << 20
	pr, pw := io.Pipe()
	src := &endless{n: total}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		fmt.Fprintf(pw, "--B\r\nContent-Disposition: form-data; name=\"projectId\"\r\n\r\n%d\r\n", p.ID)
		fmt.Fprintf(pw, "--B\r\nContent-Disposition: form-data; name=\"fileType\"\r\n\r\nmd\r\n")
		fmt.Fprintf(pw, "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.md\"\r\n\r\n")
		_, err := io.Copy(pw, src)
		if err == nil {
			_, err = io.WriteString(pw, "\r\n--B--\r\n")
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest("POST", e.URL+"/api/reports", pr)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=B")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("oversized upload: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	pr.CloseWithError(io.ErrClosedPipe)
	<-writerDone
	r := &apitest.Response{Response: resp, Body: body}
	if typ := secErrorType(t, r); typ != string(report.PayloadTooLarge) {
		t.Errorf("oversized upload: %s", body)
	}
	if n := src.read.Load(); n >= total/2 {
		t.Errorf("the daemon read %d of %d bytes of an upload over its 1 MiB limit", n, total)
	} else {
		t.Logf("client sent %d of %d bytes before the daemon cut it off", n, total)
	}
	if after := e.Tree(); len(after) != len(before) {
		t.Errorf("oversized upload left files: %v", after)
	}

	// JSON bodies have their own cap.
	r = e.PostJSON("POST", "/api/projects", map[string]any{"name": "x", "description": strings.Repeat("d", 100<<10)})
	if typ := secErrorType(t, r); typ != string(report.PayloadTooLarge) {
		t.Errorf("oversized JSON: %s", r.Body)
	}
}

func TestSecurityTraversalAndSymlinksFail(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("paths")
	e.MustUpload(p.ID, "ok.md", report.MD, []byte("# ok\n"))
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("outside the data directory"), 0o600)
	reports := filepath.Join(e.DataDir, "uploads", "reports")
	os.Symlink(secret, filepath.Join(reports, "out.md"))
	os.Symlink("../../..", filepath.Join(reports, "up"))
	os.Symlink(filepath.Dir(secret), filepath.Join(reports, "dir"))

	for _, path := range []string{
		"/uploads/../reportd.db",
		"/uploads/%2e%2e/reportd.db",
		"/uploads/reports/..%2f..%2freportd.db",
		"/uploads/reports/%2e%2e/%2e%2e/reportd.db",
		"/uploads/..%5creportd.db",
		"/uploads/reports/1.md%00.png",
		"/uploads/",
		"/uploads/reports/",
		"/uploads/reports",
		"/uploads/reports/out.md",         // symlink to a file outside
		"/uploads/reports/up/etc/passwd",  // symlinked directory climbing out
		"/uploads/reports/dir/secret.txt", // symlinked directory outside
		"/uploads//etc/passwd",
		"/uploads/reports/../../reportd.db",
	} {
		req, _ := http.NewRequest("GET", e.URL+path, nil)
		req.URL.Opaque = path // send it exactly as written, no client-side cleaning
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || bytes.Contains(b, []byte("outside the data directory")) || bytes.Contains(b, []byte("root:")) {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, b[:min(len(b), 80)])
		}
	}
	if r := e.Get("/uploads/reports/1.md"); r.StatusCode != http.StatusOK {
		t.Fatalf("the legitimate file: %d", r.StatusCode)
	}
	// Client file names never choose the stored path.
	rep := e.MustUpload(p.ID, "../../../../tmp/evil.md", report.MD, []byte("# evil\n"))
	if rep.FileName != "evil.md" || rep.FilePath != fmt.Sprintf("/uploads/reports/%d.md", rep.ID) {
		t.Fatalf("traversal name stored as %q at %q", rep.FileName, rep.FilePath)
	}
}

func TestSecurityContentMustMatchDeclaredType(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("types")
	var notPPTX bytes.Buffer
	zw := zip.NewWriter(&notPPTX)
	w, _ := zw.Create("word/document.xml")
	w.Write([]byte("<x/>"))
	zw.Close()
	cases := []struct {
		name string
		typ  report.FileType
		data []byte
	}{
		{"fake.pdf", report.PDF, []byte("this is not a PDF")},
		{"html.pdf", report.PDF, []byte("<html>%PDF-</html>")},
		{"fake.pptx", report.PPTX, []byte("PK but not a zip")},
		{"docx.pptx", report.PPTX, notPPTX.Bytes()},
		{"pdf.pptx", report.PPTX, apitest.MinimalPDF()},
		{"fake.ppt", report.PPT, []byte("not an OLE2 compound file at all")},
		{"zip.ppt", report.PPT, apitest.FakePPTX()},
		{"bin.html", report.HTML, []byte("<html>\x00\x01\x02</html>")},
		{"png.md", report.MD, apitest.PNG()},
		{"real.pdf", report.MD, apitest.MinimalPDF()}, // extension/type disagree
		{"ok.md", report.PDF, apitest.MinimalPDF()},   // extension/type disagree
		{"empty.pdf", report.PDF, nil},
	}
	before := e.Tree()
	for _, c := range cases {
		r := e.Upload(p.ID, c.name, c.typ, c.data)
		if typ := secErrorType(t, r); typ != string(report.Validation) {
			t.Errorf("%s as %s: %s %s", c.name, c.typ, typ, r.Body)
		}
	}
	if after := e.Tree(); len(after) != len(before) {
		t.Errorf("refused uploads left files: %v", after)
	}
	var list []report.Report
	e.Get("/api/reports").JSON(t, &list)
	if len(list) != 0 {
		t.Errorf("refused uploads created %d reports", len(list))
	}
}

func TestSecurityBearerToken(t *testing.T) {
	for _, reads := range []bool{false, true} {
		t.Run(fmt.Sprintf("reads=%v", reads), func(t *testing.T) {
			e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.Auth.Token, c.Auth.Reads = "t0ken", reads }})
			send := func(method, path, token string, body io.Reader, ct string) *apitest.Response {
				req, _ := http.NewRequest(method, e.URL+path, body)
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				if token != "" {
					req.Header.Set("Authorization", token)
				}
				return e.Send(req)
			}
			// Mutations need the token, whatever the form of the mistake.
			for _, bad := range []string{"", "Bearer", "Bearer ", "Bearer t0ke", "Bearer t0ken2", "Basic dDBrZW4=", "t0ken"} {
				r := send("POST", "/api/projects", bad, strings.NewReader(`{"name":"x"}`), "application/json")
				if typ := secErrorType(t, r); typ != string(report.Unauthorized) {
					t.Errorf("POST with %q: %s", bad, r.Body)
				}
				if r.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("401-type answer without WWW-Authenticate")
				}
			}
			r := send("POST", "/api/projects", "Bearer t0ken", strings.NewReader(`{"name":"x"}`), "application/json")
			if r.StatusCode != http.StatusCreated {
				t.Fatalf("POST with the token: %d %s", r.StatusCode, r.Body)
			}
			for _, m := range []string{"PUT", "DELETE"} {
				body, ct := apitest.Multipart(apitest.Part{Name: "name", Data: []byte("y")})
				if typ := secErrorType(t, send(m, "/api/projects/1", "", body, ct)); typ != string(report.Unauthorized) {
					t.Errorf("%s without token: %s", m, typ)
				}
			}
			body, ct := apitest.Multipart(apitest.Part{Name: "projectId", Data: []byte("1")}, apitest.Part{Name: "fileType", Data: []byte("md")}, apitest.Part{Name: "file", FileName: "a.md", Data: []byte("# a\n")})
			if typ := secErrorType(t, send("POST", "/api/reports", "", body, ct)); typ != string(report.Unauthorized) {
				t.Errorf("upload without token: %s", typ)
			}
			// Reads: open unless auth.reads; the health check always open.
			r = send("GET", "/api/projects", "", nil, "")
			if reads {
				if typ := secErrorType(t, r); typ != string(report.Unauthorized) {
					t.Errorf("read without token under auth.reads: %s", typ)
				}
				if r := send("GET", "/api/projects", "Bearer t0ken", nil, ""); r.StatusCode != http.StatusOK {
					t.Errorf("read with token: %d", r.StatusCode)
				}
			} else if r.StatusCode != http.StatusOK {
				t.Errorf("read without token: %d %s", r.StatusCode, r.Body)
			}
			if r := send("GET", "/api/reports/ping", "", nil, ""); r.StatusCode != http.StatusOK {
				t.Errorf("ping needs no token: %d", r.StatusCode)
			}
			// Preflight stays open so browsers can ask before sending the token.
			if r := send("OPTIONS", "/api/projects", "", nil, ""); r.StatusCode != http.StatusNoContent {
				t.Errorf("preflight: %d", r.StatusCode)
			}
		})
	}
}

// TestSecurityErrorStatusSwitch: "conventional" maps kinds to their usual
// statuses; "spec" (the default) answers 500 for all of them.
func TestSecurityErrorStatusSwitch(t *testing.T) {
	for _, mode := range []httpapi.StatusMode{httpapi.StatusConventional, httpapi.StatusSpec} {
		t.Run(string(mode), func(t *testing.T) {
			e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
				c.ErrorStatus, c.Auth.Token, c.MaxUploadBytes = string(mode), "tok", 1024
			}})
			auth := func(req *http.Request) *http.Request { req.Header.Set("Authorization", "Bearer tok"); return req }
			newReq := func(method, path string, body io.Reader, ct string) *http.Request {
				req, _ := http.NewRequest(method, e.URL+path, body)
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				return req
			}
			create := e.Send(auth(newReq("POST", "/api/projects", strings.NewReader(`{"name":"p"}`), "application/json")))
			if create.StatusCode != http.StatusCreated {
				t.Fatalf("create: %d %s", create.StatusCode, create.Body)
			}
			big, bigCT := apitest.Multipart(apitest.Part{Name: "projectId", Data: []byte("1")}, apitest.Part{Name: "fileType", Data: []byte("md")}, apitest.Part{Name: "file", FileName: "a.md", Data: bytes.Repeat([]byte("a"), 4096)})
			cases := []struct {
				req  *http.Request
				kind report.Kind
				conv int
			}{
				{newReq("GET", "/api/reports/12345", nil, ""), report.NotFound, 404},
				{newReq("GET", "/api/projects/abc", nil, ""), report.Validation, 400},
				{auth(newReq("POST", "/api/reports", big, bigCT)), report.PayloadTooLarge, 413},
				{newReq("DELETE", "/api/projects/1", nil, ""), report.Unauthorized, 401},
				{auth(newReq("PATCH", "/api/projects/1", nil, "")), report.MethodNotAllowed, 405},
			}
			for _, c := range cases {
				r := e.Send(c.req)
				want := c.conv
				if mode == httpapi.StatusSpec {
					want = http.StatusInternalServerError
				}
				if typ := secErrorType(t, r); typ != string(c.kind) || r.StatusCode != want {
					t.Errorf("%s %s: %d %s, want %d %s", c.req.Method, c.req.URL.Path, r.StatusCode, typ, want, c.kind)
				}
			}
		})
	}
}
