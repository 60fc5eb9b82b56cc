package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/prfeedback"
	"github.com/reportd/reportd/internal/report"
)

// uploadResult is one line of upload's --json output: the API's report
// object (absent when the upload failed) plus where it came from and where
// to see it.
type uploadResult struct {
	*report.Report
	LocalPath   string `json:"localPath"`
	Size        int64  `json:"size,omitempty"` // bytes sent (of a folder: its tar.zst)
	PreviewURL  string `json:"previewUrl,omitempty"`
	DownloadURL string `json:"downloadUrl,omitempty"`
	PDFURL      string `json:"pdfUrl,omitempty"`
	// LatestURL is the stable link to the newest report of this project,
	// name, type and branch, by the project's slug (docs/links.md).
	LatestURL string `json:"latestUrl,omitempty"`
	// Gates are the quality gates checked against this report
	// (--fail-under, --fail-on); Feedback is what --comment and --status did.
	Gates    []prfeedback.GateResult `json:"gates,omitempty"`
	Feedback *prfeedback.Outcome     `json:"feedback,omitempty"`
	Error    string                  `json:"error,omitempty"`

	err error
}

// uploadFiles sends files with o.jobs workers. It returns one result per
// file, in order. A failure that would hit every file the same way (refused
// credentials, server gone) stops the remaining uploads.
func uploadFiles(ctx context.Context, o *uploadOptions, files []localFile, project report.Project) ([]uploadResult, error) {
	results := make([]uploadResult, len(files))
	if len(files) == 0 {
		return results, nil
	}
	c, err := o.f.Client()
	if err != nil {
		return results, err
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	pr := newProgress(ctx, o.f.IO, o.json)
	if w := pr.writer(); w != nil {
		defer o.f.retries.printAbove(w)()
	}

	next := make(chan int)
	var wg sync.WaitGroup
	for range min(o.jobs, len(files)) {
		wg.Go(func() {
			for i := range next {
				results[i] = uploadOne(ctx, c, pr, files[i], project, o.meta, o.entry)
				if code := exitCodeOf(results[i].err); code == exitcode.Auth || code == exitcode.Forbidden || code == exitcode.Unreachable {
					stop(results[i].err)
				}
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	pr.wait()

	var first error
	failed := 0
	for _, r := range results {
		if r.err != nil {
			failed++
			if first == nil {
				first = r.err
			}
		}
	}
	if first == nil {
		return results, nil
	}
	return results, exitcode.With(exitCodeOf(first),
		fmt.Errorf("%d of %d upload(s) failed; first: %w", failed, len(files), first))
}

func uploadOne(ctx context.Context, c *client.Client, pr *progress, lf localFile, project report.Project, meta report.BuildMeta, entry string) uploadResult {
	res := uploadResult{LocalPath: lf.path, Size: lf.size}
	if err := context.Cause(ctx); err != nil {
		res.err, res.Error = err, "not attempted: "+err.Error()
		return res
	}
	b := pr.bar(lf.path, lf.size)
	path := lf.path
	if lf.tree == nil {
		meta = indexPageName(meta, path)
	}
	in := report.ReportUpload{
		ProjectID: project.ID,
		FileType:  lf.typ,
		Meta:      meta,
		File: report.Upload{
			FileName: lf.name,
			// Called for every attempt: each retry sends the file from its start.
			Open: func() (io.ReadCloser, error) {
				b.restart()
				f, err := os.Open(path)
				if err != nil {
					return nil, err
				}
				return readCloser{Reader: b.reader(f), Closer: f}, nil
			},
		},
	}
	var archiveSize func() int64
	if lf.tree != nil {
		// A folder: a tar.zst made on the fly, rooted at the folder itself.
		in.File, archiveSize = siteUpload(lf, b)
		in.Entry, in.Root = entry, "."
	}
	r, err := c.UploadReport(ctx, in)
	b.done(err == nil)
	if archiveSize != nil {
		res.Size = archiveSize()
	}
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != ctx.Err() {
			err = context.Cause(ctx) // stopped because another upload hit a fatal error
		}
		res.err, res.Error = err, err.Error()
		return res
	}
	res.Report = &r
	res.PreviewURL, res.DownloadURL, res.PDFURL = c.PreviewURL(r.ID), c.DownloadURL(r.ID), c.PDFURL(r.ID)
	res.LatestURL = latestURL(&r, project.Slug)
	return res
}

// indexPageName names a single file whose own name says nothing
// (index.html, as coverage.py, Allure and Playwright write it) after its
// folder when no name was given: htmlcov/index.html is "htmlcov", not
// "index", so two generators' pages never share latest links, badges or
// retention.
func indexPageName(meta report.BuildMeta, path string) report.BuildMeta {
	if meta.Name != nil || !report.IsIndexPage(path) {
		return meta
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return meta
	}
	dir := filepath.Base(filepath.Dir(abs))
	if dir == "" || dir == "." || dir == string(filepath.Separator) {
		return meta
	}
	name := report.NameFromFolder(dir)
	meta.Name = &name
	return meta
}

type readCloser struct {
	io.Reader
	io.Closer
}
