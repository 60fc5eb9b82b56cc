package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// reconcile looks on the server for the report an interrupted upload may
// have created (the watcher was killed mid-upload, or the response was
// lost), so that the file is not published twice. A candidate has the
// file's name, a higher id than the report it replaces, and an upload time
// no earlier than the attempt (with slack for clock granularity). For html
// and md the stored text must hash to what was sent; other types, and texts
// too large for the detail (fileContentOmitted), carry no content in the
// API's detail, so the newest candidate is taken.
func (p *publisher) reconcile(ctx context.Context, path string, u uploading) (report.Report, bool, error) {
	list, err := p.svc.ListReports(ctx, &u.ProjectID)
	if err != nil {
		return report.Report{}, false, err
	}
	base := filepath.Base(path)
	typ, _ := report.TypeOfName(base)
	since := u.Started.Add(-2 * time.Second)
	for i := len(list) - 1; i >= 0; i-- { // newest first
		r := list[i]
		if r.FileName != base || r.ID <= u.After || r.UploadTime.Before(since) {
			continue
		}
		if !typ.IsText() {
			return r, true, nil
		}
		full, err := p.svc.GetReport(ctx, r.ID)
		if err != nil {
			return report.Report{}, false, err
		}
		if full.FileContentOmitted {
			return r, true, nil
		}
		if full.FileContent == nil {
			continue
		}
		sum := sha256.Sum256([]byte(*full.FileContent))
		if hex.EncodeToString(sum[:]) == u.SHA256 {
			return r, true, nil
		}
	}
	return report.Report{}, false, nil
}
