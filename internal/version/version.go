// Package version labels the build: set Version with
// -ldflags "-X github.com/reportd/reportd/internal/version.Version=1.2.3",
// otherwise it comes from the module version or the VCS revision.
package version

import (
	"runtime/debug"
	"sync"
)

// Version is set at link time; empty means "derive from build info".
var Version string

var once sync.Once

// String is the version both programs print and ping reports.
func String() string {
	once.Do(func() {
		if Version != "" {
			return
		}
		Version = "devel"
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			return
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			Version = v
			return
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			Version = "devel+" + rev + dirty
		}
	})
	return Version
}
