package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/reportd/reportd/internal/dirzip"
	"github.com/reportd/reportd/internal/report"
)

// siteOf scans a folder named on the command line: it is uploaded as one
// site, a tar.zst made on the fly of the files below it (see internal/dirzip
// for what goes in and what is refused). The folder is the site's root: the
// archive's names are relative to it and the upload says root=".", so the
// server keeps them as they are instead of stripping a shared top folder.
// The file part is named after the folder ("htmlcov", no made-up
// extension: the server knows the format by its first bytes), which
// becomes the report's file name and, unless --name says otherwise, its
// name.
func siteOf(dir string, override report.FileType) (localFile, error) {
	if override != "" && override != report.HTML {
		return localFile{}, usageErrorf("%s is a directory, uploaded as an html site: --type %s does not apply", dir, override)
	}
	tree, err := dirzip.Scan(dir, dirzip.Options{CheckName: report.CheckSiteName})
	if err != nil {
		return localFile{}, fmt.Errorf("%s: cannot upload the folder: %w", dir, err)
	}
	if len(tree.Files) == 0 {
		return localFile{}, fmt.Errorf("%s: the folder holds no file", dir)
	}
	return localFile{path: dir, name: siteName(dir), typ: report.HTML, size: tree.Bytes, tree: tree}, nil
}

// siteName is the folder's own name ("htmlcov" for ./htmlcov/, the current
// folder's name for "."), which the server turns into the report's name.
func siteName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if b := filepath.Base(abs); b != "" && b != "." && b != string(filepath.Separator) {
		return b
	}
	return "site"
}

// checkEntry makes sure --entry names a file of every folder uploaded.
func checkEntry(entry string, files []localFile) error {
	if err := report.CheckSiteName(entry); err != nil {
		return usageErrorf("--entry: %s", report.MessageOf(err))
	}
	n := 0
	for _, f := range files {
		if f.tree == nil {
			continue
		}
		n++
		if !hasFile(f.tree, entry) {
			return usageErrorf("--entry %s: no such file in %s", entry, f.path)
		}
	}
	if n == 0 {
		return usageErrorf("--entry is for folders (sites); no folder was given")
	}
	return nil
}

func hasFile(t *dirzip.Tree, name string) bool {
	for _, f := range t.Files {
		if f.Name == name {
			return true
		}
	}
	return false
}

// siteUpload is the upload of a folder: every attempt (Open) writes the
// archive again from the start; the bytes are the same each time.
func siteUpload(lf localFile, b *bar) (report.Upload, func() int64) {
	var mu sync.Mutex
	var sent int64
	return report.Upload{
			FileName:    lf.name,
			ContentType: "application/zstd",
			Open: func() (io.ReadCloser, error) {
				b.restart()
				return lf.tree.Open(b.reader, func(r dirzip.Result, err error) {
					if err == nil {
						mu.Lock()
						sent = r.ArchiveBytes
						mu.Unlock()
					}
				}), nil
			},
		}, func() int64 {
			mu.Lock()
			defer mu.Unlock()
			return sent
		}
}
