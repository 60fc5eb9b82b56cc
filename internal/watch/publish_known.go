package watch

import "context"

// The decisions publish (a file) and publishSite (a site folder) share.

// known is what the state file holds on a path: the version published, the
// version given up on.
type known struct {
	prev    published
	hasPrev bool
	fail    failed
	hasFail bool
}

// knownByStat looks the path up in the state file and settles it when its
// size and mtime are those of the version published (still here although
// published: an --on-success move or delete was cut short by a crash or
// restart, so it is finished now) or given up on.
func (p *publisher) knownByStat(path string, st stat) (known, result, bool) {
	var k known
	k.prev, k.hasPrev = p.store.published(path)
	if k.hasPrev && k.prev.Size == st.size && k.prev.MTime == st.mtime {
		_ = p.store.dequeue(path)
		p.afterSuccess(path)
		return k, result{path: path, kind: resDone, stat: st}, true
	}
	k.fail, k.hasFail = p.store.failedRec(path)
	if k.hasFail && k.fail.Size == st.size && k.fail.MTime == st.mtime {
		_ = p.store.dequeue(path)
		return k, result{path: path, kind: resDone, stat: st}, true
	}
	return k, result{}, false
}

// knownBySum settles the path by its content hash: given up on and
// unchanged since, or the same bytes as published under a new mtime
// (touched, re-saved unchanged, copied over): already published, and
// publishing twice is the one thing the watcher must never do.
func (p *publisher) knownBySum(path string, st stat, k known, sum string) (result, bool) {
	if k.hasFail && sum == k.fail.SHA256 {
		_ = p.store.dequeue(path)
		return result{path: path, kind: resDone, stat: st}, true
	}
	if k.hasPrev && sum == k.prev.SHA256 {
		_ = p.store.touchPublished(path, st.size, st.mtime)
		p.log.emit(Event{Event: evUnchanged, Path: path, ReportID: k.prev.ReportID})
		p.afterSuccess(path)
		return result{path: path, kind: resDone, stat: st}, true
	}
	return result{}, false
}

// markUploading records in the state file that an upload of this version
// starts, so that an interrupted one is found again (reconcile).
func (p *publisher) markUploading(path, sum string, projectID int64, st stat, k known) error {
	mark := uploading{SHA256: sum, Size: st.size, ProjectID: projectID, Started: p.now()}
	if k.hasPrev {
		mark.After = k.prev.ReportID
	}
	return p.store.markUploading(path, mark)
}

// replaced applies --replace once the new report id is recorded.
func (p *publisher) replaced(ctx context.Context, path string, k known, id int64) {
	if k.hasPrev && p.opts.replace && k.prev.ReportID != 0 && k.prev.ReportID != id {
		p.deleteOld(ctx, path, k.prev.ReportID)
	}
}

// byContent settles the path by its content hash (knownBySum), or finds
// its project and settles it as a published file or site folder renamed
// or moved within the watched folders (a folder renamed, a file tidied
// into a subfolder): the same content in the same project is the same
// report, which takes the new name when rename is set. Otherwise it
// returns the project to upload to.
func (p *publisher) byContent(ctx context.Context, path string, st stat, k known, sum string, rename bool) (int64, result, bool) {
	if res, ok := p.knownBySum(path, st, k, sum); ok {
		return 0, res, true
	}
	projectID, err := p.projects.forFile(ctx, path)
	if err != nil {
		return 0, p.failed(path, st, classify(err), err), true
	}
	if !k.hasPrev {
		if from, rec, ok := p.takeOver(path, sum, projectID, st); ok {
			p.log.emit(Event{Event: evRenamed, Path: path, From: from, ReportID: rec.ReportID})
			if rename {
				p.renameReport(ctx, path, from, rec.ReportID)
			}
			return 0, result{path: path, kind: resDone, stat: st}, true
		}
	}
	return projectID, result{}, false
}
