package detect

import (
	"io"
	"io/fs"
	"slices"

	"github.com/reportd/reportd/internal/report"
)

// SiteFS is Site and Results of the site fsys holds (a site.View's FS,
// or a folder as os.DirFS): its files are the regular files fs.WalkDir
// finds, in byte order of their paths (a manifest's order); a folder that
// cannot be listed or a file that cannot be opened counts as not there.
func SiteFS(fsys fs.FS) (generator string, s *report.Summary, r *report.Results) {
	return SiteFiles(walkFiles(fsys), func(name string) (io.ReadCloser, error) { return fsys.Open(name) })
}

// SiteFiles is SiteFS of a site whose files are known already (a
// manifest's paths, in byte order): no folder is listed.
func SiteFiles(files []string, open Opener) (generator string, s *report.Summary, r *report.Results) {
	generator, s = Site(files, open)
	return generator, s, Results(generator, files, open)
}

// walkFiles lists the regular files of fsys, sorted by path.
func walkFiles(fsys fs.FS) []string {
	var files []string
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	return files
}
