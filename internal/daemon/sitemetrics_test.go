package daemon

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

func siteTgz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return b.Bytes()
}

// /metrics tells how each stored site was read: a .tar.gz declared html
// before it came is read as it arrives; a zip, or a .tar.gz whose
// fileType comes after it, from the staged copy, with the reason.
func TestSiteIngestMetrics(t *testing.T) {
	c := testConfig(t, t.TempDir())
	s, _ := startServer(t, c)
	base := "http://" + s.Addr()
	proj := createProject(t, base, "sm")
	files := map[string]string{"index.html": "<p>i</p>", "a.css": "p{}"}
	if st, _, e, err := upload(httpClient, base, proj.ID, "html", "site.tar.gz", siteTgz(t, files)); err != nil || st != http.StatusCreated {
		t.Fatalf("tar.gz upload: %d %v %v", st, e, err)
	}
	if st, _, e, err := upload(httpClient, base, proj.ID, "html", "site.zip", siteZip(t, files)); err != nil || st != http.StatusCreated {
		t.Fatalf("zip upload: %d %v %v", st, e, err)
	}
	// The file part first, fileType after it.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "late.tar.gz")
	fw.Write(siteTgz(t, files))
	mw.WriteField("projectId", fmt.Sprint(proj.ID))
	mw.WriteField("fileType", "html")
	mw.Close()
	resp, err := httpClient.Post(base+"/api/reports", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("fileType after the file: %s", resp.Status)
	}
	text := string(getBody(t, base+"/metrics"))
	for _, want := range []string{
		`reportd_site_ingests_total{path="streamed",reason=""} 1`,
		`reportd_site_ingests_total{path="staged",reason="format"} 1`,
		`reportd_site_ingests_total{path="staged",reason="undeclared"} 1`,
		`reportd_site_ingests_total{path="staged",reason="busy"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
