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
	// Kind is "site" for a folder (Files files, Size bytes together).
	Kind  string `json:"kind"`
	Files int    `json:"files,omitempty"`
}

func printUploadPlan(o *uploadOptions, files []localFile, p report.Project) error {
	plan := make([]plannedUpload, 0, len(files))
	for _, f := range files {
		u := plannedUpload{LocalPath: f.path, FileName: f.name, FileType: f.typ, Size: f.size, ProjectID: p.ID, ProjectName: p.Name, Kind: report.KindFile}
		if f.tree != nil {
			u.Kind, u.Files = report.KindSite, len(f.tree.Files)
		}
		plan = append(plan, u)
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
	t := newTable(o.f.IO.Out, o.f.IO.OutTTY, "FILE", "TYPE", "SIZE", "KIND")
	for _, u := range plan {
		kind := u.Kind
		if u.Files > 0 {
			kind = fmt.Sprintf("site of %d files", u.Files)
		}
		t.add(u.LocalPath, string(u.FileType), fmt.Sprint(u.Size), kind)
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
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.LocalPath, r.ID, r.PreviewURL, r.DownloadURL, r.PDFURL, r.DashboardURL, r.LatestURL, r.SiteURL)
			continue
		}
		what := ""
		if r.IsSite() {
			what = fmt.Sprintf(", site of %d files, %s", r.Files, sizeIEC(r.Bytes))
		}
		fmt.Fprintf(w, "%s → report %d %q (project %d%s)%s\n  open:     %s\n",
			r.LocalPath, r.ID, r.Name, r.ProjectID, what, describeMeta(report.BuildMeta{Branch: r.Branch, Commit: r.Commit}),
			r.DashboardURL)
		if r.SiteURL != "" {
			fmt.Fprintf(w, "  site:     %s\n", r.SiteURL)
		}
		if fig := figuresText(r.Generator, r.Summary); fig != "" {
			fmt.Fprintf(w, "  results:  %s\n", fig)
		}
		fmt.Fprintf(w, "  download: %s\n  pdf:      %s\n", r.DownloadURL, r.PDFURL)
		if r.LatestURL != "" {
			fmt.Fprintf(w, "  latest:   %s\n", r.LatestURL)
		}
	}
	return nil
}
