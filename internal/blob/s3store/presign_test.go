package s3store_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/blob"
)

// TestPresignGet: a presigned URL fetched with a plain client returns the
// object's bytes with exactly the Content-Disposition and Content-Type it
// was signed with, serves ranges, and stops working when it is altered.
func TestPresignGet(t *testing.T) {
	s := newStore(t, "pre")
	data := make([]byte, 200_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if _, err := s.Put(ctx, "reports/7.pdf", bytes.NewReader(data), blob.PutOptions{Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	const disp = `attachment; filename="Q3 _ _.pdf"; filename*=UTF-8''Q3%20%E2%80%94%20%22x%22.pdf`
	u, err := s.PresignGet(ctx, "reports/7.pdf", 5*time.Minute, disp, "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(u.Path, "/pre/reports/7.pdf") {
		t.Errorf("URL path %q does not name the prefixed key", u.Path)
	}
	get := func(rawURL, rng string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", rawURL, nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, b := get(u.String(), "")
	if resp.StatusCode != 200 || !bytes.Equal(b, data) {
		t.Fatalf("GET: %s, %d bytes", resp.Status, len(b))
	}
	if got := resp.Header.Get("Content-Disposition"); got != disp {
		t.Errorf("Content-Disposition %q, want %q", got, disp)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/pdf" {
		t.Errorf("Content-Type %q", got)
	}
	resp, b = get(u.String(), "bytes=1000-1999")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, data[1000:2000]) {
		t.Errorf("Range: %s, %d bytes", resp.Status, len(b))
	}
	// The signature covers the response overrides: changing one is refused.
	q := u.Query()
	q.Set("response-content-type", "text/html")
	bad := *u
	bad.RawQuery = q.Encode()
	if resp, _ := get(bad.String(), ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("altered URL: %s, want 403", resp.Status)
	}
	if _, err := s.PresignGet(ctx, "../x", time.Minute, "", ""); err == nil {
		t.Error("a bad key was presigned")
	}
}
