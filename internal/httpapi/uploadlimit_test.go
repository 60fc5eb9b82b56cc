package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
)

// TestUploadRefusedByContentLength: a client that announces a 2.5 GB
// upload (the default max_upload_bytes is 2 GiB) and sends a few bytes
// gets PayloadTooLargeError at once, saying the limit in bytes and GiB:
// the daemon never waits for the body. Nothing is stored.
func TestUploadRefusedByContentLength(t *testing.T) {
	for _, mode := range []string{"spec", "conventional"} {
		t.Run(mode, func(t *testing.T) {
			e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.ErrorStatus = mode }})
			before := e.Tree()
			u, _ := url.Parse(e.URL)
			conn, err := net.DialTimeout("tcp", u.Host, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			const announced = 2_684_354_560 // 2.5 GB
			fmt.Fprintf(conn, "POST /api/reports HTTP/1.1\r\nHost: %s\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: %d\r\n\r\n--xyz\r\n", u.Host, announced)
			// The answer must come while the body is still owed; the
			// generous bound only keeps a broken daemon from hanging the test.
			conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			start := time.Now()
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer before the body was sent: %v", err)
			}
			defer res.Body.Close()
			var body struct{ Error, Type string }
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			wantStatus := http.StatusInternalServerError
			if mode == "conventional" {
				wantStatus = http.StatusRequestEntityTooLarge
			}
			if res.StatusCode != wantStatus || body.Type != "PayloadTooLargeError" ||
				!strings.HasPrefix(body.Error, "PayloadTooLargeError: ") ||
				!strings.Contains(body.Error, "2684354560 bytes") || !strings.Contains(body.Error, "2147483648 bytes (2.00 GiB)") {
				t.Errorf("%d %+v", res.StatusCode, body)
			}
			t.Logf("refused after %v with %q", time.Since(start), body.Error)
			if got := e.Tree(); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("files changed: %v -> %v", before, got)
			}
		})
	}
}
