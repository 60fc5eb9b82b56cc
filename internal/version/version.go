// Package version labels the build. Release builds (scripts/build.sh,
// scripts/dist.sh) set Version with
// -ldflags "-X github.com/reportd/reportd/internal/version.Version=1.2.3",
// the string scripts/version.sh derives from git (issue 23); a module
// installed by a release tag reports that tag; anything else, a plain
// `go build` included, is "devel".
package version

import (
	"regexp"
	"runtime/debug"
	"sync"
)

// Version is set at link time; empty means "derive from build info".
var Version string

var once sync.Once

// pseudo matches a Go pseudo-version (v0.0.0-20261127223000-9b1daa4d467a),
// which go build stamps from the VCS since Go 1.24: not a release.
var pseudo = regexp.MustCompile(`\d{14}-[0-9a-f]{12}`)

// String is the version both programs print and ping reports.
func String() string {
	once.Do(func() {
		if Version != "" {
			return
		}
		Version = fromBuildInfo()
	})
	return Version
}

func fromBuildInfo() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromModule(bi.Main.Version)
}

// fromModule is the version of a build whose main module has version v.
func fromModule(v string) string {
	if v == "" || v == "(devel)" || pseudo.MatchString(v) {
		return "devel"
	}
	return v
}
