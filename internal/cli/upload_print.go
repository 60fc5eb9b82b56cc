package cli

import (
	"fmt"

	"github.com/reportd/reportd/internal/report"
)

// plannedUpload is one line of a dry run's --json output.
type plannedUpload struct {
	LocalPath   string          `json:"localPath"`
	FileName    string          `json:"fileName"`
	FileType    report.FileType `json:"fileType"`
	Size        int64           `json:"size"`
	ProjectID   int64           `json:"projectId"`
	ProjectName string          `json:"projectName,omitempty"`
}

func printUploadPlan(o *uploadOptions, files []localFile, p report.Project) error {
	plan := make([]plannedUpload, 0, len(files))
	for _, f := range files {
		plan = append(plan, plannedUpload{LocalPath: f.path, FileName: f.name, FileType: f.typ, Size: f.size, ProjectID: p.ID, ProjectName: p.Name})
	}
	if o.json {
		return writeJSON(o.f.IO.Out, plan)
	}
	target := "project " + itoa(p.ID)
	if p.ID == 0 {
		target = fmt.Sprintf("new project %q", p.Name)
	} else if p.Name != "" {
		target = fmt.Sprintf("project %d (%s)", p.ID, p.Name)
	}
	fmt.Fprintf(o.f.IO.ErrOut, "dry run: would upload %d file(s) into %s\n", len(plan), target)
	t := newTable(o.f.IO.Out, o.f.IO.OutTTY, "FILE", "TYPE", "SIZE")
	for _, u := range plan {
		t.add(u.LocalPath, string(u.FileType), fmt.Sprint(u.Size))
	}
	return t.print()
}

// printUploadResults writes the successes to stdout (failures are in the
// returned error and, with --json, in their own entries).
func printUploadResults(o *uploadOptions, results []uploadResult) error {
	if o.json {
		return writeJSON(o.f.IO.Out, results)
	}
	w := o.f.IO.Out
	for _, r := range results {
		if r.Report == nil {
			fmt.Fprintf(o.f.IO.ErrOut, "failed: %s: %s\n", r.LocalPath, r.Error)
			continue
		}
		if !o.f.IO.OutTTY {
			// Columns are only ever added at the end, for scripts that cut them.
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.LocalPath, r.ID, r.PreviewURL, r.DownloadURL, r.PDFURL, r.DashboardURL, r.LatestURL)
			continue
		}
		fmt.Fprintf(w, "%s → report %d %q (project %d)%s\n  open:     %s\n  download: %s\n  pdf:      %s\n",
			r.LocalPath, r.ID, r.Name, r.ProjectID, describeMeta(report.BuildMeta{Branch: r.Branch, Commit: r.Commit}),
			r.DashboardURL, r.DownloadURL, r.PDFURL)
		if r.LatestURL != "" {
			fmt.Fprintf(w, "  latest:   %s\n", r.LatestURL)
		}
	}
	return nil
}
