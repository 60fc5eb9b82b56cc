package office

import (
	"io"
	"os"
	"path/filepath"

	"github.com/reportd/reportd/internal/convert/engine"
)

// staged runs convert on a copy of j.in inside the worker's job directory,
// the only place its sandbox can see, and moves the PDF it leaves there to
// j.out. The job directory is emptied afterwards, whatever happened.
// *staging is set when the input could not be put into the job directory,
// which is the worker's fault (its directory was removed), not the input's.
func (w *officeWorker) staged(j *officeJob, convert func(in, out string) error, staging *bool) error {
	defer w.clearJob()
	in := filepath.Join(w.job, "in"+filepath.Ext(j.in))
	out := filepath.Join(w.job, "out.pdf")
	// Copies, not links or renames: the sandbox may write its job directory,
	// and must reach neither the stored original nor the cache file.
	if err := copyFile(j.in, in); err != nil {
		if _, serr := os.Stat(j.in); serr == nil {
			*staging = true
		}
		return engine.DiskErr(err, "cannot stage the presentation for conversion")
	}
	if err := convert(in, out); err != nil {
		return err
	}
	if err := copyFile(out, j.out); err != nil {
		return engine.DiskErr(err, "cannot write the PDF cache")
	}
	return nil
}

// clearJob empties the job directory, so no job sees another's files.
func (w *officeWorker) clearJob() {
	entries, _ := os.ReadDir(w.job)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(w.job, e.Name()))
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
