package blob

import "os"

// Stager is a store's own staging area for bytes on their way in (an
// upload being received, a site's large file, a compressed copy): every
// writer of file bytes stages through it and stores the file with PutFile,
// so there is one path for file bytes whatever the store. Both stores
// implement it: the local one stages on its own file system, outside its
// objects, so PutFile adopts the file by fsync and rename; S3 stages in
// local scratch space and PutFile streams the file with Put.
//
// Staged files are not objects (Walk never sees them) and are not durable
// until PutFile returns. Whoever owns the directory clears it at start-up
// (reportd: <data>/tmp, swept before the listener opens).
type Stager interface {
	// TempDir is the staging directory (absolute).
	TempDir() string
}

// TempDir is s's staging directory: its own where it is a Stager,
// else the system's temp directory.
func TempDir(s Store) string {
	if st, ok := s.(Stager); ok {
		if d := st.TempDir(); d != "" {
			return d
		}
	}
	return os.TempDir()
}

// CreateTemp creates a new file in s's staging directory (os.CreateTemp's
// pattern); the caller stores it with PutFile or removes it.
func CreateTemp(s Store, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(TempDir(s), pattern)
	if err != nil {
		return nil, StorageErr(err, "cannot store the file")
	}
	return f, nil
}
