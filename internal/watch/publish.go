package watch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/dirzip"
	"github.com/reportd/reportd/internal/report"
)

// job is one finished file for a worker.
type job struct{ ready }

type resultKind int

const (
	resDone     resultKind = iota // published, or nothing to publish
	resGone                       // the file disappeared
	resUnstable                   // it changed since it was judged finished
	resRetry                      // try again later (see fail)
	resGaveUp                     // rejected --max-attempts times (or a transient error in --once)
)

type result struct {
	path      string
	kind      resultKind
	fail      failure
	attempt   int
	err       error
	stat      stat // on resDone/resGaveUp: the version now known
	published bool
}

// publisher does the work of one file: decide whether it needs publishing,
// upload it, record it, and apply --replace and --on-success. Workers call
// it concurrently; it touches only the state file and the server.
type publisher struct {
	opts     *options
	svc      report.Service
	store    *store
	projects *projects
	log      *eventLog
	now      func() time.Time
	renames  renames
	moveMu   sync.Mutex // serialises takeOver
}

// renames remembers paths that fsnotify reported renamed away, so that a
// published file showing up under a new name is recognised as moved.
type renames struct {
	mu    sync.Mutex
	paths map[string]time.Time
}

const renameMemory = 10 * time.Minute

func (r *renames) note(path string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paths == nil {
		r.paths = map[string]time.Time{}
	}
	for p, at := range r.paths {
		if now.Sub(at) > renameMemory {
			delete(r.paths, p)
		}
	}
	r.paths[path] = now
}

// renamedAway reports whether path, or a folder above it, was renamed away.
func (r *renames) renamedAway(path string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := path; ; p = filepath.Dir(p) {
		if at, ok := r.paths[p]; ok && now.Sub(at) <= renameMemory {
			return true
		}
		if parent := filepath.Dir(p); parent == p {
			return false
		}
	}
}

func (p *publisher) publish(ctx context.Context, j job) result {
	if p.opts.sites {
		return p.publishSite(ctx, j)
	}
	path := j.path
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		_ = p.store.dequeue(path)
		return result{path: path, kind: resGone}
	}
	if err != nil {
		return p.failed(path, stat{}, transient, err)
	}
	st := stat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st.size != j.size || !fi.ModTime().Equal(j.mtime) {
		return result{path: path, kind: resUnstable}
	}

	k, res, ok := p.knownByStat(path, st)
	if ok {
		return res
	}
	sum, _, err := hashFile(path)
	if err != nil {
		return p.failed(path, st, transient, err)
	}
	projectID, res, ok := p.byContent(ctx, path, st, k, sum, true)
	if ok {
		return res
	}
	if q, ok := p.store.queuedRec(path); ok && q.Uploading != nil {
		// An earlier upload's outcome is unknown: find it before sending
		// the file again.
		rep, found, err := p.reconcile(ctx, path, *q.Uploading)
		if err != nil {
			return p.failed(path, st, classify(err), err)
		}
		if found && q.Uploading.SHA256 == sum {
			return p.recorded(ctx, j, st, rep, sum, q.Uploading.Size, k, "recovered: uploaded before an interruption")
		}
	}

	typ, _ := report.TypeOfName(path)
	if err := p.markUploading(path, sum, projectID, st, k); err != nil {
		return p.failed(path, st, transient, err)
	}
	src := &hashingSource{path: path}
	meta := fileMeta(p.opts.meta, path)
	rep, err := p.svc.UploadReport(ctx, report.ReportUpload{
		ProjectID:      projectID,
		FileType:       typ,
		File:           report.Upload{FileName: filepath.Base(path), Open: src.open},
		Meta:           meta,
		IdempotencyKey: idempotencyKey(projectID, path, sum, meta),
	})
	if err != nil {
		if lerr := src.localErr(); lerr != nil {
			// Reading our own file failed (permissions, vanished): not the
			// server's fault, so never trip the outage handling for it.
			if errors.Is(lerr, fs.ErrNotExist) {
				_ = p.store.dequeue(path)
				return result{path: path, kind: resGone}
			}
			return p.failed(path, st, transient, lerr)
		}
		return p.failed(path, st, classify(err), err)
	}

	// Record what was actually sent: if the file changed during the upload,
	// the next look sees a different hash and publishes the new content.
	sentSum, size, ok := src.sent()
	if !ok {
		sentSum, size = sum, st.size
	}
	return p.recorded(ctx, j, st, rep, sentSum, size, k, "")
}

// recorded finishes a publication: state, log, --replace, --on-success.
func (p *publisher) recorded(ctx context.Context, j job, st stat, rep report.Report, sum string, size int64, k known, note string) result {
	path := j.path
	rec := published{Size: size, MTime: st.mtime, SHA256: sum, ReportID: rep.ID, ProjectID: rep.ProjectID, At: p.now()}
	if err := p.store.markPublished(path, rec); err != nil {
		// The report exists but we could not remember it; say so loudly,
		// since a restart would publish it again.
		p.log.emit(Event{Event: evError, Path: path, ReportID: rep.ID, Message: "published but the state file could not record it", Error: err.Error()})
	}
	p.log.emit(Event{Event: evPublished, Path: path, ReportID: rep.ID, ProjectID: rep.ProjectID, Bytes: size, SHA256: sum,
		LatencyMs: p.now().Sub(j.change).Milliseconds(), Forced: j.forced, Message: note, DashboardURL: rep.DashboardURL, SiteURL: rep.SiteURL})

	p.replaced(ctx, path, k, rep.ID)
	kind := resDone
	if fi2, err := os.Lstat(path); err == nil && (size != st.size || fi2.Size() != st.size || fi2.ModTime().UnixNano() != st.mtime) {
		kind = resUnstable // it changed while we sent it; look again
	}
	if kind == resDone {
		p.afterSuccess(path)
	}
	return result{path: path, kind: kind, stat: stat{size: size, mtime: st.mtime}, published: true}
}

// takeOver finds a published file with this content in this project that
// was renamed away (it, or a folder above it) in the last renameMemory, and
// moves its record to path. A deleted file, a copy, or the same content
// written anew is not a move, and neither is the watcher's own
// --on-success move. Workers take records over one at a time, so that files
// with equal content pair up one to one.
func (p *publisher) takeOver(path, sum string, projectID int64, st stat) (string, published, bool) {
	if p.opts.onSuccess.kind != "keep" {
		return "", published{}, false
	}
	p.moveMu.Lock()
	defer p.moveMu.Unlock()
	for _, from := range p.store.pathsWithSHA(sum) {
		if from == path || !p.renames.renamedAway(from, p.now()) {
			continue
		}
		if a, _ := report.TypeOfName(from); a != typeOf(path) {
			continue // notes.md → notes.html is a new report of another type
		}
		if _, err := os.Lstat(from); !errors.Is(err, fs.ErrNotExist) {
			continue // back again: this is a copy, published on its own
		}
		if rec, ok := p.store.published(from); !ok || rec.ProjectID != projectID {
			continue
		}
		if rec, err := p.store.moved(from, path, st.size, st.mtime); err == nil {
			return from, rec, true
		}
	}
	return "", published{}, false
}

func typeOf(path string) report.FileType { t, _ := report.TypeOfName(path); return t }

// renameReport gives the report the file's new name, so that the server
// lists what the folder holds. A failure is only a warning: the content,
// which is what was published, is unchanged.
func (p *publisher) renameReport(ctx context.Context, path, from string, id int64) {
	name := filepath.Base(path)
	if name == filepath.Base(from) {
		return
	}
	if _, err := p.svc.UpdateReport(ctx, id, report.ReportUpdate{FileName: &name}); err != nil {
		p.log.emit(Event{Event: evWarning, Path: path, ReportID: id, Message: "could not rename the report", Error: err.Error()})
	}
}

// deleteOld removes the report that --replace superseded. It runs only after
// the new upload succeeded and was recorded; a deletion the server cannot
// take now is remembered in the state file and paid later.
func (p *publisher) deleteOld(ctx context.Context, path string, id int64) {
	err := p.svc.DeleteReport(ctx, id)
	if err == nil || report.IsKind(err, report.NotFound) {
		p.log.emit(Event{Event: evReplaced, Path: path, ReportID: id})
		return
	}
	_ = p.store.oweDelete(id)
	p.log.emit(Event{Event: evWarning, Path: path, ReportID: id, Message: "could not delete the replaced report yet; will retry", Error: err.Error()})
}

// payDeletes retries --replace deletions owed from earlier runs or outages.
func (p *publisher) payDeletes(ctx context.Context) {
	for _, id := range p.store.owedDeletes() {
		err := p.svc.DeleteReport(ctx, id)
		if err == nil || report.IsKind(err, report.NotFound) {
			_ = p.store.paidDelete(id)
			p.log.emit(Event{Event: evReplaced, ReportID: id})
		}
	}
}

func (p *publisher) afterSuccess(path string) {
	switch p.opts.onSuccess.kind {
	case "delete":
		if err := p.removeUnit(path); err != nil {
			p.log.emit(Event{Event: evWarning, Path: path, Message: "--on-success delete failed", Error: err.Error()})
			return
		}
		p.log.emit(Event{Event: evDeleted, Path: path})
	case "move":
		p.move(path, p.opts.onSuccess.dir)
	}
}

func (p *publisher) move(path, dir string) string {
	to, err := moveInto(p.opts.rootOf(path), path, dir)
	if err != nil {
		p.log.emit(Event{Event: evWarning, Path: path, Message: "moving the file failed", Error: err.Error()})
		return ""
	}
	p.log.emit(Event{Event: evMoved, Path: path, To: to})
	return to
}

// failed handles an error: an outage waits, a transient error retries, and
// a rejection counts toward --max-attempts, after which the file is set
// aside (--on-failure) and remembered so it is not retried until it changes.
func (p *publisher) failed(path string, st stat, f failure, err error) result {
	now := p.now()
	q, _ := p.store.noteFailure(path, f == rejected, f == unreachable, err.Error(), now)
	res := result{path: path, kind: resRetry, fail: f, attempt: q.Tries, err: err}
	switch {
	case f == rejected:
		res.attempt = q.Rejections
		if q.Rejections < p.opts.maxAttempts {
			p.log.emit(Event{Event: evRejected, Path: path, Attempt: q.Rejections, Error: err.Error()})
			return res
		}
	case f == transient && p.opts.once && q.Tries < p.opts.maxAttempts:
		return res
	case f == transient && p.opts.once:
		// --once gives up on the run, not on the file: it stays queued.
		res.kind = resGaveUp
		p.log.emit(Event{Event: evFailed, Path: path, Attempt: q.Tries, Error: err.Error()})
		return res
	default:
		return res
	}
	sum := p.hashOf(path)
	to := ""
	if p.opts.onFailure.kind == "move" {
		to = p.move(path, p.opts.onFailure.dir)
	}
	_ = p.store.markFailed(path, failed{Size: st.size, MTime: st.mtime, SHA256: sum, Error: err.Error(), At: now})
	p.log.emit(Event{Event: evFailed, Path: path, Attempt: q.Rejections, To: to, Error: err.Error()})
	res.kind, res.stat = resGaveUp, st
	return res
}

// hashOf is the content hash the failed record keeps: the file's sha256,
// or a site folder's tree hash ("" when it cannot be read).
func (p *publisher) hashOf(path string) string {
	if !p.opts.sites {
		sum, _, _ := hashFile(path)
		return sum
	}
	tree, err := dirzip.Scan(path, dirzip.Options{Exclude: p.opts.excludeMarker})
	if err != nil {
		return ""
	}
	sum, _ := tree.Hash()
	return sum
}
