package blob

import (
	"os"
)

// FileObject is an Object over an open local file (a converted PDF in the
// engines' cache): it keeps the *os.File (Filer), so net/http still sends
// it with sendfile. Closing the Object closes f.
func FileObject(f *os.File, key string) (Object, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, StorageErr(err, "cannot read the file")
	}
	return &fileObject{f: f, info: Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}}, nil
}

type fileObject struct {
	f    *os.File
	info Info
}

func (o *fileObject) Read(p []byte) (int, error)                { return o.f.Read(p) }
func (o *fileObject) ReadAt(p []byte, off int64) (int, error)   { return o.f.ReadAt(p, off) }
func (o *fileObject) Seek(off int64, whence int) (int64, error) { return o.f.Seek(off, whence) }
func (o *fileObject) Close() error                              { return o.f.Close() }
func (o *fileObject) Info() Info                                { return o.info }
func (o *fileObject) File() *os.File                            { return o.f }
