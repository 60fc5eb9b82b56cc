package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// slowUpload posts a report over a raw loopback connection: the headers
// and the first fast bytes at once, then one byte every drip until the
// server stops reading (or, with drip 0, nothing more). It returns the
// response the server sent while the body was still arriving.
func slowUpload(t *testing.T, e *apitest.Env, project int64, fast int, drip time.Duration) *http.Response {
	t.Helper()
	body, ctype := apitest.Multipart(
		apitest.Part{Name: "projectId", Data: []byte(fmt.Sprint(project))},
		apitest.Part{Name: "fileType", Data: []byte("html")},
		apitest.Part{Name: "file", FileName: "slow.html", Data: bytes.Repeat([]byte("<p>slow</p>\n"), 8<<10)},
	)
	raw, _ := io.ReadAll(body)
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := fmt.Sprintf("POST /api/reports HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ctype, len(raw))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(raw[:fast]); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	if drip > 0 {
		go func() {
			tick := time.NewTicker(drip)
			defer tick.Stop()
			for _, b := range raw[fast:] {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if _, err := conn.Write([]byte{b}); err != nil {
					return
				}
			}
		}()
	}
	conn.SetReadDeadline(time.Now().Add(60 * time.Second)) // a hang fails, it never passes
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response while the body was still arriving: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

func wantSlowError(t *testing.T, resp *http.Response, status int) {
	t.Helper()
	var body httpapi.ErrorBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: not an error body: %v", resp.Status, err)
	}
	if resp.StatusCode != status || body.Type != string(report.Validation) || !strings.Contains(body.Error, "too slowly") {
		t.Fatalf("%s %+v", resp.Status, body)
	}
}

func wantNothingStored(t *testing.T, e *apitest.Env) {
	t.Helper()
	if r := e.Get("/api/reports"); string(r.Body) != "[]\n" {
		t.Fatalf("stored after a cut-off upload: %s", r.Body)
	}
	if tree := e.Tree(); len(tree) != 0 {
		t.Fatalf("files left after a cut-off upload: %v", tree)
	}
}

func TestUploadBelowMinimumRateIsCutOff(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
		c.UploadMinRate, c.UploadRateGrace, c.UploadIdleTimeout = 64<<10, 300*time.Millisecond, time.Minute
	}})
	p := e.CreateProject("p")
	wantSlowError(t, slowUpload(t, e, p.ID, 1000, 20*time.Millisecond), http.StatusInternalServerError)
	wantNothingStored(t, e)
}

func TestUploadThatStallsIsCutOff(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
		c.ErrorStatus = "conventional"
		c.UploadMinRate, c.UploadIdleTimeout = 0, 300*time.Millisecond
	}})
	p := e.CreateProject("p")
	wantSlowError(t, slowUpload(t, e, p.ID, 40<<10, 0), http.StatusRequestTimeout)
	wantNothingStored(t, e)
}

// A client that keeps up is not disturbed by the pacing, and the
// connection stays usable for the next request. The idle bound is
// generous: on a loaded machine the test's own client can pause for a
// second, which is not what this test is about.
func TestPacedUploadAtFullSpeed(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
		c.UploadMinRate, c.UploadRateGrace, c.UploadIdleTimeout = 64<<10, 300*time.Millisecond, 10*time.Second
	}})
	p := e.CreateProject("p")
	data := bytes.Repeat([]byte("<p>fast enough</p>\n"), 200<<10)
	for range 3 {
		rep := e.MustUpload(p.ID, "fast.html", report.HTML, data)
		if got := e.Get(rep.FilePath); !bytes.Equal(got.Body, data) {
			t.Fatalf("stored %d bytes, sent %d", len(got.Body), len(data))
		}
	}
}
