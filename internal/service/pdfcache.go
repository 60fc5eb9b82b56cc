package service

import (
	"context"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

// PDFCache answers PDF requests: from a cache, or by converting on a miss.
// localPDFs is the engines' own cache on the local disk (storage: bolt and
// postgres, and the default); sharedPDFs keeps the PDFs in the bucket for
// every replica (storage: postgres+s3, pdfshared.go).
type PDFCache interface {
	// PDF returns rec's PDF printed with opts (checked for rec's type by
	// the caller). The caller closes it.
	PDF(ctx context.Context, rec report.ReportRecord, opts report.PrintOptions) (blob.Object, error)
	// Prepare converts rec's default print in the background, so the first
	// request is a hit (convert_on_upload). It never blocks the caller.
	Prepare(rec report.ReportRecord)
	// Close stops background conversions and waits for them.
	Close() error
}

// Locker takes named cluster-wide locks without waiting (storage:
// postgres: pgstore.Store.TryLock, a PostgreSQL session advisory lock). ok
// is false when another holder has it; unlock releases it.
type Locker interface {
	TryLock(ctx context.Context, name string) (unlock func(), ok bool, err error)
}

// localPDFs is the engines' local cache, as before the shared one: the
// PDF is a local file, sent with sendfile.
type localPDFs struct{ s *Service }

func (l localPDFs) PDF(ctx context.Context, rec report.ReportRecord, opts report.PrintOptions) (blob.Object, error) {
	f, err := l.s.enginePDF(ctx, rec, opts)
	if err != nil {
		return nil, err
	}
	o, err := blob.FileObject(f, "")
	if err != nil {
		f.Close()
		return nil, err
	}
	return o, nil
}

// Prepare hands the job to the engines' own background conversion: a
// site (its entry page), read through the blob store whichever it is, or
// a single file with local files only: a fetched copy would have to
// outlive it.
func (l localPDFs) Prepare(rec report.ReportRecord) {
	if job, ok := l.s.siteJob(rec, report.PrintOptions{}); ok {
		l.s.conv.Prepare(job)
		return
	}
	if _, local := l.s.blobs.(blob.Pather); !local {
		return
	}
	if job, release, err := l.s.job(context.Background(), rec); err == nil {
		l.s.conv.Prepare(job)
		release()
	}
}

func (localPDFs) Close() error { return nil }
