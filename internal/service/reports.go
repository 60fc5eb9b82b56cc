package service

import (
	"context"
	"io"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

func (s *Service) ListReports(ctx context.Context, projectID *int64) ([]report.Report, error) {
	return s.FindReports(ctx, report.ReportFilter{ProjectID: projectID})
}

// FindReports lists one project's reports or all, narrowed by name and branch.
func (s *Service) FindReports(ctx context.Context, f report.ReportFilter) ([]report.Report, error) {
	recs, err := s.meta.Reports(ctx, f.ProjectID)
	if err != nil {
		return nil, err
	}
	out := make([]report.Report, 0, len(recs))
	for i := range recs {
		if metaFilter(&recs[i].Report, f) {
			out = append(out, recs[i].Report)
		}
	}
	return out, nil
}

// GetReport is the detail: fileContent holds the text of html and md
// files up to MaxInlineContent; above it fileContent is null and
// fileContentOmitted and fileContentSize say why.
func (s *Service) GetReport(ctx context.Context, id int64) (report.Report, error) {
	r, f, size, err := s.ReportDetail(ctx, id)
	if err != nil || f == nil {
		return r, err
	}
	defer f.Close()
	text, err := readAllString(f, size)
	if err != nil {
		return report.Report{}, report.Wrap(report.Storage, err, "cannot read the report's file")
	}
	r.FileContent = &text
	return r, nil
}

// ReportDetail is GetReport without reading the text: when the detail
// carries fileContent, content is the open object (size bytes) for the
// caller to read and close (HTTP streams it into the response); otherwise
// content is nil and r is the whole detail.
func (s *Service) ReportDetail(ctx context.Context, id int64) (r report.Report, content io.ReadCloser, size int64, err error) {
	rec, err := s.meta.Report(ctx, id)
	if err != nil {
		return report.Report{}, nil, 0, err
	}
	if rec.IsSite() {
		// A site has no one text: fileContent is null, and not because
		// of a size limit (fileContentOmitted stays false).
		return rec.Report, nil, 0, nil
	}
	o, err := s.open(ctx, rec.FilePath)
	if err != nil {
		return report.Report{}, nil, 0, report.Wrap(report.Storage, err, "the report's file is missing")
	}
	r = rec.Report
	size = o.Info().Size
	switch {
	case !r.FileType.IsText():
		o.Close()
		return r, nil, 0, nil
	case size > s.cfg.MaxInlineContent:
		o.Close()
		r.FileContentOmitted, r.FileContentSize = true, size
		return r, nil, 0, nil
	}
	return r, o, size, nil
}

// Stage streams an upload's file into a temp file in the blob store's
// staging area, under the size limit.
func (s *Service) Stage(r io.Reader) (*files.Staged, error) {
	return files.Stage(s.blobs, r, s.cfg.MaxUploadBytes)
}

// UploadReport stages and commits in one go (the Go API; HTTP streams the
// multipart parts in whatever order they come and uses Stage + Commit).
func (s *Service) UploadReport(ctx context.Context, in report.ReportUpload) (report.Report, error) {
	if in.File.Body == nil {
		return report.Report{}, report.Errorf(report.Validation, "file is required")
	}
	st, err := s.Stage(in.File.Body)
	if err != nil {
		return report.Report{}, err
	}
	defer st.Discard()
	return s.Commit(ctx, st, in.ProjectID, in.FileType, in.File.FileName, in.Meta)
}

// Commit validates a staged upload and stores it: reserve the id, move the
// file to its final name durably, then commit the row. The reply follows
// only after the row is committed.
func (s *Service) Commit(ctx context.Context, st *files.Staged, projectID int64, t report.FileType, clientName string, meta report.BuildMeta) (report.Report, error) {
	name, err := BaseName(clientName)
	if err != nil {
		return report.Report{}, err
	}
	if err := checkBuildMeta(&meta); err != nil {
		return report.Report{}, err
	}
	if err := checkNameType(name, t); err != nil {
		return report.Report{}, err
	}
	if err := s.checkStaged(st, t); err != nil {
		return report.Report{}, err
	}
	if _, err := s.meta.Project(ctx, projectID); err != nil {
		return report.Report{}, err
	}
	id, err := s.meta.NextReportID(ctx)
	if err != nil {
		return report.Report{}, err
	}
	rec := report.ReportRecord{
		Report: report.Report{ID: id, ProjectID: projectID, FileName: name, FileType: t,
			FilePath: reportPath(id, t), UploadTime: report.LocalTime{Time: s.cfg.Clock.NowLocal()}},
		Size: st.Size, SHA256: st.SHA256,
	}
	rec.Name = report.NameFromFile(name)
	if meta.Name != nil && *meta.Name != "" {
		rec.Name = *meta.Name
	}
	rec.Branch, rec.Commit, rec.BuildURL, rec.BuildID = nonEmpty(meta.Branch), nonEmpty(meta.Commit), nonEmpty(meta.BuildURL), nonEmpty(meta.BuildID)
	if t == report.HTML {
		rec.Generator, rec.Summary, rec.Results = s.detect(st)
	}
	if err := s.place(ctx, st, rec.FilePath); err != nil {
		return report.Report{}, err
	}
	out, err := s.meta.CreateReport(ctx, rec)
	if err != nil {
		s.removeFile(rec.FilePath)
		return report.Report{}, err
	}
	if s.cfg.ConvertOnUpload {
		s.pdfs.Prepare(out)
	}
	return out.Report, nil
}

// UpdateReport renames and/or retypes a report. A new type means a new
// extension, so the file gets a second name first, the row is committed,
// and only then the old name is removed.
func (s *Service) UpdateReport(ctx context.Context, id int64, in report.ReportUpdate) (report.Report, error) {
	rec, err := s.meta.Report(ctx, id)
	if err != nil {
		return report.Report{}, err
	}
	name, t := rec.FileName, rec.FileType
	if in.FileName != nil {
		if name, err = BaseName(*in.FileName); err != nil {
			return report.Report{}, err
		}
	}
	if in.FileType != nil {
		if t, err = report.ParseFileType(string(*in.FileType)); err != nil {
			return report.Report{}, err
		}
	}
	if rec.IsSite() {
		if t != report.HTML {
			return report.Report{}, report.Errorf(report.Validation, "report %d is a site: its fileType is html and cannot change (to %q)", id, t)
		}
	} else if err := checkNameType(name, t); err != nil {
		return report.Report{}, err
	}
	if err := checkBuildMeta(&in.BuildMeta); err != nil {
		return report.Report{}, err
	}
	change := report.ReportChange{FileName: &name, FileType: &t, Meta: in.BuildMeta}
	if t != rec.FileType {
		if err := s.checkStoredAs(ctx, rec, t); err != nil {
			return report.Report{}, err
		}
		newPath := reportPath(id, t)
		if err := s.copyFile(ctx, rec.FilePath, newPath); err != nil {
			return report.Report{}, report.Wrap(report.Storage, err, "cannot rename the report's file")
		}
		change.FilePath = &newPath
	}
	out, err := s.meta.UpdateReport(ctx, id, change)
	if err != nil {
		if change.FilePath != nil {
			s.removeFile(*change.FilePath)
		}
		return report.Report{}, err
	}
	if change.FilePath != nil {
		s.removeFile(rec.FilePath)
		s.forget(id)
	}
	return out.Report, nil
}

// checkStaged applies the content rule to an upload.
func (s *Service) checkStaged(st *files.Staged, t report.FileType) error {
	f, err := st.Open()
	if err != nil {
		return report.Wrap(report.Storage, err, "cannot read the upload")
	}
	defer f.Close()
	return checkContent(f, st.Size, t, st.Scan)
}

// checkStoredAs applies the upload's content rule, every check of it, to
// the stored bytes under a new type.
func (s *Service) checkStoredAs(ctx context.Context, rec report.ReportRecord, t report.FileType) error {
	o, err := s.open(ctx, rec.FilePath)
	if err != nil {
		return report.Wrap(report.Storage, err, "the report's file is missing")
	}
	defer o.Close()
	return checkContent(o, o.Info().Size, t, nil)
}

// copyFile gives a stored file a second API path, durably, so that a
// rename can be committed before the old name goes.
func (s *Service) copyFile(ctx context.Context, oldPath, newPath string) error {
	from, err := files.Key(oldPath)
	if err != nil {
		return err
	}
	to, err := files.Key(newPath)
	if err != nil {
		return err
	}
	return blob.Copy(ctx, s.blobs, from, to)
}

// DeleteReport commits the row deletion, then removes the file and its
// PDFs; for a site its manifest, then the content objects no other
// manifest references (site GC, after the grace period).
func (s *Service) DeleteReport(ctx context.Context, id int64) error {
	rec, err := s.meta.DeleteReport(ctx, id)
	if err != nil {
		return err
	}
	if s.removeStored(rec) {
		s.collectSites(ctx)
	}
	s.forget(id)
	return nil
}
