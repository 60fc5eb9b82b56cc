package watch

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/dirzip"
	"github.com/reportd/reportd/internal/report"
)

// publishSite is publish for a site folder (--sites): the same decisions
// (already published, given up on, unchanged, renamed, interrupted upload),
// with the folder's fingerprint as its size and mtime and the tree hash of
// its files (dirzip) as its sha256.
func (p *publisher) publishSite(ctx context.Context, j job) result {
	dir := j.path
	fi, err := siteStat(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) || (err == nil && !p.opts.hasMarker(dir)) {
		_ = p.store.dequeue(dir)
		return result{path: dir, kind: resGone}
	}
	if err != nil {
		return p.failed(dir, stat{}, transient, err)
	}
	st := statOf(fi)
	if st.size != j.size || !fi.ModTime().Equal(j.mtime) {
		return result{path: dir, kind: resUnstable}
	}
	k, res, ok := p.knownByStat(dir, st)
	if ok {
		return res
	}
	tree, err := dirzip.Scan(dir, dirzip.Options{Exclude: p.opts.excludeMarker, CheckName: report.CheckSiteName, Hash: true})
	if err != nil {
		// A link leading outside, a named pipe, a name the server would
		// refuse: the folder's own problem, counted like a rejection.
		return p.failed(dir, st, rejected, report.Wrap(report.Validation, err, "cannot publish the folder"))
	}
	if len(tree.Files) == 0 {
		// Nothing to publish yet (a folder just made): its first file
		// brings it back.
		_ = p.store.dequeue(dir)
		return result{path: dir, kind: resGone}
	}
	sum, err := tree.Hash()
	if err != nil {
		return p.failed(dir, st, transient, err)
	}
	projectID, res, ok := p.byContent(ctx, dir, st, k, sum, false)
	if ok {
		return res
	}
	// Named after the folder, no made-up extension: the server knows the
	// format by its first bytes, and the folder's name becomes the report's
	// file name and name ("playwright-report").
	name := filepath.Base(dir)
	if q, ok := p.store.queuedRec(dir); ok && q.Uploading != nil {
		rep, found, err := p.reconcileSite(ctx, name, *q.Uploading)
		if err != nil {
			return p.failed(dir, st, classify(err), err)
		}
		if found && q.Uploading.SHA256 == sum {
			return p.recordedSite(ctx, j, st, rep, sum, tree, k, "recovered: uploaded before an interruption")
		}
	}

	if err := p.markUploading(dir, sum, projectID, st, k); err != nil {
		return p.failed(dir, st, transient, err)
	}
	src := &archiveSource{tree: tree}
	rep, err := p.svc.UploadReport(ctx, report.ReportUpload{
		ProjectID:      projectID,
		FileType:       report.HTML,
		File:           report.Upload{FileName: name, ContentType: "application/zstd", Open: src.open},
		Root:           ".",
		Meta:           p.opts.meta,
		IdempotencyKey: idempotencyKey(projectID, dir, sum, p.opts.meta),
	})
	if err != nil {
		if lerr := src.localErr(); lerr != nil {
			// Reading our own folder failed: not the server's fault.
			return p.failed(dir, st, transient, lerr)
		}
		return p.failed(dir, st, classify(err), err)
	}
	if sent, ok := src.sent(); ok {
		sum = sent.SHA256
	}
	return p.recordedSite(ctx, j, st, rep, sum, tree, k, "")
}

// recordedSite is recorded for a site: the state, the log (with the file
// count and site URL), --replace, --on-success.
func (p *publisher) recordedSite(ctx context.Context, j job, st stat, rep report.Report, sum string, tree *dirzip.Tree, k known, note string) result {
	dir := j.path
	rec := published{Size: st.size, MTime: st.mtime, SHA256: sum, ReportID: rep.ID, ProjectID: rep.ProjectID, At: p.now(), Files: len(tree.Files)}
	if err := p.store.markPublished(dir, rec); err != nil {
		p.log.emit(Event{Event: evError, Path: dir, ReportID: rep.ID, Message: "published but the state file could not record it", Error: err.Error()})
	}
	p.log.emit(Event{Event: evPublished, Path: dir, ReportID: rep.ID, ProjectID: rep.ProjectID, Bytes: tree.Bytes, SHA256: sum,
		Count: len(tree.Files), LatencyMs: p.now().Sub(j.change).Milliseconds(), Forced: j.forced, Message: note,
		DashboardURL: rep.DashboardURL, SiteURL: rep.SiteURL})
	p.replaced(ctx, dir, k, rep.ID)
	kind := resDone
	if fi, err := siteStat(dir); err == nil && statOf(fi) != st {
		kind = resUnstable // it changed while we sent it; look again
	}
	if kind == resDone {
		p.afterSuccess(dir)
	}
	return result{path: dir, kind: kind, stat: st, published: true}
}

// reconcileSite finds the site report an interrupted upload of the folder
// may have created: named like the folder (or its zip, as earlier
// versions named it), a site, newer than
// the report it replaces and than the attempt. The API carries no hash of a
// site, so the newest such report is taken.
func (p *publisher) reconcileSite(ctx context.Context, name string, u uploading) (report.Report, bool, error) {
	list, err := p.svc.ListReports(ctx, &u.ProjectID)
	if err != nil {
		return report.Report{}, false, err
	}
	since := u.Started.Add(-2 * time.Second)
	for i := len(list) - 1; i >= 0; i-- {
		r := list[i]
		if (r.FileName != name && r.FileName != name+".zip") || !r.IsSite() || r.ID <= u.After || r.UploadTime.Before(since) {
			continue
		}
		return r, true, nil
	}
	return report.Report{}, false, nil
}

// archiveSource is the upload's Open for a site: each attempt archives the
// folder again (the same bytes), and the outcome of the last complete
// archive is kept.
type archiveSource struct {
	tree *dirzip.Tree
	mu   sync.Mutex
	res  dirzip.Result
	done bool
	lerr error
}

func (s *archiveSource) open() (io.ReadCloser, error) {
	s.mu.Lock()
	s.done, s.lerr = false, nil
	s.mu.Unlock()
	return s.tree.Open(nil, func(r dirzip.Result, err error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case err == nil:
			s.res, s.done = r, true
		case !errors.Is(err, io.ErrClosedPipe):
			s.lerr = err
		}
	}), nil
}

func (s *archiveSource) sent() (dirzip.Result, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.res, s.done
}

func (s *archiveSource) localErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lerr
}

// removeUnit deletes a published file, or a site folder with everything in
// it (--on-success delete).
func (p *publisher) removeUnit(path string) error {
	if p.opts.sites {
		return os.RemoveAll(path)
	}
	return os.Remove(path)
}
