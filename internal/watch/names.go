package watch

import (
	"path/filepath"

	"github.com/reportd/reportd/internal/report"
)

// indexPageMeta is the build metadata of a single file published from
// path: a file whose own name says nothing (index.html, as coverage.py,
// Allure and Playwright write it) is named after its folder
// (htmlcov/index.html is "htmlcov", not "index"), so two generators'
// pages in one project never share latest links, badges or retention.
// Any other file is named by the server from its file name.
func indexPageMeta(path string) report.BuildMeta {
	if !report.IsIndexPage(path) {
		return report.BuildMeta{}
	}
	dir := filepath.Base(filepath.Dir(path))
	if dir == "" || dir == "." || dir == string(filepath.Separator) {
		return report.BuildMeta{}
	}
	name := report.NameFromFolder(dir)
	return report.BuildMeta{Name: &name}
}

// fileMeta is the metadata of one published file: watch's own (flags and
// CI), with an index page named after its folder unless --name gave one.
func fileMeta(meta report.BuildMeta, path string) report.BuildMeta {
	if meta.Name == nil {
		meta.Name = indexPageMeta(path).Name
	}
	return meta
}
