package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/report"
)

// End-to-end request costs through the real handler, service, bbolt store
// and data directory over loopback (logging discarded):
//
//	go test -run '^$' -bench . -benchmem ./internal/httpapi

// benchSeeded is a stack with 1000 projects and 100 reports in project 1.
func benchSeeded(b *testing.B) *apitest.Env { return benchSeededN(b, 100) }

// benchSeededN puts n reports in project 1 (each with its small file).
func benchSeededN(b *testing.B, n int) *apitest.Env {
	e := apitest.Start(b, apitest.Options{})
	now := time.Now().Truncate(time.Second)
	ps := make([]report.Project, 1000)
	for i := range ps {
		d := "a project for the benchmark"
		ps[i] = report.Project{ID: int64(i + 1), Name: fmt.Sprintf("project-%d", i+1), Description: &d, CreatedAt: report.LocalTime{Time: now}}
	}
	rs := make([]report.ReportRecord, n)
	for i := range rs {
		id := int64(i + 1)
		rs[i] = report.ReportRecord{Report: report.Report{ID: id, ProjectID: 1, FileName: fmt.Sprintf("quarterly report %d.md", id),
			FileType: report.MD, FilePath: fmt.Sprintf("/uploads/reports/%d.md", id), UploadTime: report.LocalTime{Time: now}},
			Size: 10, SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
		if err := os.WriteFile(filepath.Join(e.DataDir, "uploads", "reports", strconv.FormatInt(id, 10)+".md"), []byte("# A report\n"), 0o640); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Store.BulkLoad(context.Background(), ps, rs); err != nil {
		b.Fatal(err)
	}
	return e
}

func benchGet(b *testing.B, url string) {
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatal(resp.Status)
		}
		b.SetBytes(n)
	}
}

func BenchmarkListProjects1000(b *testing.B) {
	e := benchSeeded(b)
	benchGet(b, e.URL+"/api/projects")
}

func BenchmarkListReportsOfProject100(b *testing.B) {
	e := benchSeeded(b)
	benchGet(b, e.URL+"/api/reports?projectId=1")
}

func BenchmarkListReportsAll100k(b *testing.B) {
	e := benchSeededN(b, 100_000)
	benchGet(b, e.URL+"/api/reports")
}

func BenchmarkGetReport(b *testing.B) {
	e := benchSeeded(b)
	benchGet(b, e.URL+"/api/reports/42")
}

// BenchmarkServe fetches a stored file through preview and download.
func BenchmarkServe(b *testing.B) {
	for _, size := range []int{50 << 10, 10 << 20} {
		for _, route := range []string{"preview", "download"} {
			b.Run(fmt.Sprintf("%s/%dKiB", route, size>>10), func(b *testing.B) {
				e := apitest.Start(b, apitest.Options{})
				p := e.CreateProject("serve")
				body := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("0123456789abcdef"), size/16)...)
				body = append(body, "\n%%EOF\n"...)
				r := e.MustUpload(p.ID, "big.pdf", report.PDF, body)
				benchGet(b, fmt.Sprintf("%s/api/reports/%d/%s", e.URL, r.ID, route))
			})
		}
	}
}

// BenchmarkUpload streams a 64 MiB PDF as multipart with a known length,
// as a browser does; each upload is fsynced and committed.
func BenchmarkUpload64MiB(b *testing.B) {
	const size = 64 << 20
	e := apitest.Start(b, apitest.Options{})
	p := e.CreateProject("upload")
	file := make([]byte, size)
	copy(file, "%PDF-1.4\n")
	for i := 9; i < size-7; i++ {
		file[i] = byte(i*7 + i>>9)
	}
	copy(file[size-7:], "\n%%EOF\n")
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("projectId", strconv.FormatInt(p.ID, 10))
	mw.WriteField("fileType", "pdf")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="big.pdf"`)
	w, _ := mw.CreatePart(h)
	w.Write(file)
	mw.Close()
	form := buf.Bytes()
	client := &http.Client{}
	b.SetBytes(size)
	for b.Loop() {
		req, _ := http.NewRequest("POST", e.URL+"/api/reports", bytes.NewReader(form))
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			b.Fatal(resp.Status)
		}
	}
}
