package daemon

import (
	"context"
	"errors"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

// presignDownloads is httpapi.Config.PresignDownload with storage:
// postgres+s3 and s3.presign_downloads: it checks that the report's object
// is in the bucket (a missing one is the API's NotFound from reportd, not
// S3's error page) and signs a GET of it, valid s3.presign_ttl, whose
// response carries the disposition and type reportd would send.
func presignDownloads(st *s3store.Store, c config.Config) func(ctx context.Context, rec report.ReportRecord, disposition, contentType string) (string, bool, error) {
	ttl := c.S3.PresignTTL
	return func(ctx context.Context, rec report.ReportRecord, disposition, contentType string) (string, bool, error) {
		key, err := files.Key(rec.FilePath)
		if err != nil {
			return "", false, err
		}
		if _, err := st.Stat(ctx, key); err != nil {
			var re *report.Error
			switch {
			case errors.Is(err, blob.ErrNotFound):
				return "", false, report.Wrap(report.NotFound, err, "file not found")
			case errors.As(err, &re):
				return "", false, err
			}
			return "", false, report.Wrap(report.Storage, err, "cannot read the stored file")
		}
		u, err := st.PresignGet(ctx, key, ttl, disposition, contentType)
		if err != nil {
			return "", false, report.Wrap(report.Storage, err, "cannot presign the download")
		}
		return u.String(), true, nil
	}
}
