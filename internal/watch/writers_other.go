//go:build !linux

package watch

// openForWriting has no portable implementation; elsewhere the settle time
// and --max-wait alone decide.
func openForWriting(paths []string) map[string]bool { return nil }

// foldersOpenForWriting: likewise.
func foldersOpenForWriting(dirs []string) map[string]bool { return nil }
