// Command dist packs the release artifacts of reportd and reportctl into
// dist/ from binaries scripts/dist.sh has built (issue 23): the reportctl
// archives, the reportd tarballs, the .deb files (nFPM as a library, with
// nfpm.yaml at the repository root), a CycloneDX SBOM per binary
// (cyclonedx-gomod, built by dist.sh from this module's pinned version),
// the clients folder reportd serves at /dl/, and checksums.txt.
//
// Everything it writes is a function of the commit: files sorted, owned by
// root, times from SOURCE_DATE_EPOCH, gzip headers without names or times.
// It is its own module so that nFPM's dependencies stay out of reportd's.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// target is one GOOS/GOARCH a binary is built for.
type target struct{ os, arch string }

func (t target) exe() string {
	if t.os == "windows" {
		return ".exe"
	}
	return ""
}

// dir is where dist.sh put this target's binaries.
func (t target) dir(out string) string { return filepath.Join(out, "build", t.os+"_"+t.arch) }

var (
	clientTargets = []target{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}}
	serverTargets = []target{{"linux", "amd64"}, {"linux", "arm64"}}
)

type dist struct {
	repo, out, version string
	epoch              time.Time
	cyclonedx          string          // the cyclonedx-gomod binary; "" skips SBOMs
	only               map[string]bool // artifact kinds to make; empty: all
	artifacts          []string        // files of dist/ that checksums.txt lists
}

func main() {
	var d dist
	var only string
	flag.StringVar(&d.repo, "repo", ".", "repository root")
	flag.StringVar(&d.out, "out", "dist", "output folder (binaries in OUT/build/<os>_<arch>/)")
	flag.StringVar(&d.version, "version", "", "release version (scripts/version.sh)")
	flag.StringVar(&d.cyclonedx, "cyclonedx", "", "cyclonedx-gomod binary for the SBOMs")
	flag.StringVar(&only, "only", "", "comma-separated subset: reportctl-<os>-<arch>, reportd-<arch>, deb-<arch>, sbom (default: everything)")
	flag.Parse()
	if d.version == "" {
		fatal(fmt.Errorf("-version is required"))
	}
	epoch, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	if err != nil {
		fatal(fmt.Errorf("SOURCE_DATE_EPOCH must be the commit time in seconds: %v", err))
	}
	d.epoch = time.Unix(epoch, 0).UTC()
	d.only = map[string]bool{}
	for _, o := range strings.Split(only, ",") {
		if o != "" {
			d.only[o] = true
		}
	}
	if err := d.run(); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "dist:", err)
	os.Exit(1)
}

func (d *dist) want(kind string) bool { return len(d.only) == 0 || d.only[kind] }

func (d *dist) run() error {
	for _, t := range clientTargets {
		if d.want("reportctl-" + t.os + "-" + t.arch) {
			if err := d.clientArchive(t); err != nil {
				return err
			}
		}
	}
	for _, t := range serverTargets {
		if d.want("reportd-" + t.arch) {
			if err := d.serverArchive(t); err != nil {
				return err
			}
		}
	}
	var debs []target
	for _, t := range serverTargets {
		if d.want("deb-" + t.arch) {
			debs = append(debs, t)
		}
	}
	if len(debs) > 0 {
		clients, err := d.clientsDir()
		if err != nil {
			return err
		}
		for _, t := range debs {
			if err := d.deb(t, clients); err != nil {
				return err
			}
		}
	}
	if d.cyclonedx != "" && d.want("sbom") {
		if err := d.sboms(); err != nil {
			return err
		}
	}
	return d.checksums()
}
