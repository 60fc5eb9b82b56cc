package service

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
	"github.com/reportd/reportd/internal/sitegen"
)

// A published site's precompressed variants appear in the background
// (polled with a deadline: no timing is asserted), decode to the files,
// and go with the site at GC.
func TestSiteVariantsInBackground(t *testing.T) {
	ctx := context.Background()
	s, _ := newLocal(t, t.TempDir(), Config{})
	p, err := s.CreateProject(ctx, report.ProjectCreate{Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	gs := sitegen.CoveragePy(t)
	var parts []SitePart
	for _, f := range gs.Files {
		parts = append(parts, SitePart{Name: f, Open: func() (io.ReadCloser, error) {
			return os.Open(filepath.Join(gs.Dir, filepath.FromSlash(f)))
		}})
	}
	rep, err := s.CommitSite(ctx, SiteUpload{ProjectID: p.ID, FileType: report.HTML, FileName: "htmlcov", Root: ".", Parts: parts})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.SiteManifest(ctx, rep.ID)
	if err != nil {
		t.Fatal(err)
	}
	var want []site.File
	for _, f := range m.Files {
		if site.Wants(f) {
			want = append(want, f)
		}
	}
	if len(want) == 0 {
		t.Fatal("the coverage.py site has no file that wants variants")
	}
	deadline := time.Now().Add(2 * time.Minute)
	compressed := 0
	for _, f := range want {
		for {
			v, err := site.LookupVariants(ctx, s.blobs, f.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			if v.Done {
				if v.Size(site.Brotli) > 0 {
					compressed++
					bf := f
					bf.Encoding = site.Brotli
					o, err := s.OpenSiteFile(ctx, rep.ID, bf)
					if err != nil {
						t.Fatal(err)
					}
					got, err := io.ReadAll(brotli.NewReader(o))
					o.Close()
					plain, _ := os.ReadFile(filepath.Join(gs.Dir, filepath.FromSlash(f.Path)))
					if err != nil || string(got) != string(plain) {
						t.Errorf("%s: brotli variant decodes to %d bytes (%v), want %d", f.Path, len(got), err, len(plain))
					}
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no variants of %s after 2 minutes", f.Path)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if compressed == 0 {
		t.Error("no file of the coverage.py site got a brotli variant")
	}
	// Every variant goes with its original at GC.
	if err := s.DeleteReport(ctx, rep.ID); err != nil {
		t.Fatal(err)
	}
	left := 0
	if err := s.blobs.Walk(ctx, site.ObjectPrefix, func(i blob.Info) error {
		if strings.Contains(i.Key, ".") {
			left++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d variants or markers left after the site was deleted and collected", left)
	}
}

// SiteVariants queues a file whose variants are not made (after a restart,
// or a full queue): they appear without another publish.
func TestSiteVariantsOnRequest(t *testing.T) {
	ctx := context.Background()
	s, _ := newLocal(t, t.TempDir(), Config{})
	body := strings.Repeat("<tr><td>covered</td></tr>\n", 400)
	sum := sha256.Sum256([]byte(body))
	f := site.File{Path: "index.html", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(body)), ContentType: site.ContentType("index.html")}
	if _, err := s.blobs.Put(ctx, site.ObjectKey(f.SHA256), strings.NewReader(body), blob.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		v, err := s.SiteVariants(ctx, 1, f)
		if err != nil {
			t.Fatal(err)
		}
		if v.Done && v.Size(site.Brotli) > 0 && v.Size(site.Gzip) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("variants not made on request: %+v", v)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Each variant is the file's bytes, compressed: decode and compare.
	for enc, decode := range map[string]func(io.Reader) (io.Reader, error){
		site.Gzip:   func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		site.Brotli: func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil },
	} {
		vf := f
		vf.Encoding = enc
		o, err := s.OpenSiteFile(ctx, 1, vf)
		if err != nil {
			t.Fatalf("%s variant: %v", enc, err)
		}
		raw, err := io.ReadAll(o)
		o.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) >= len(body) {
			t.Errorf("%s variant of %d bytes is no smaller than the file's %d", enc, len(raw), len(body))
		}
		r, err := decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s variant: %v", enc, err)
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != body {
			t.Errorf("%s variant decodes to %d bytes (%v), want the file's %d bytes", enc, len(got), err, len(body))
		}
	}
}
