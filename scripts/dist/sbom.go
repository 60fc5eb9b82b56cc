package main

import (
	"crypto/sha1"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// sboms writes a CycloneDX SBOM of every binary built, with
// cyclonedx-gomod's bin mode (the modules the Go linker recorded in that
// very binary, so exactly what ships for that platform, and no git needed):
// <program>_<version>_<os>_<arch>.cdx.json. They are
// deterministic (a serial number derived from program, version and
// platform, no timestamp), so checksums.txt lists them too.
func (d *dist) sboms() error {
	dirs, err := filepath.Glob(filepath.Join(d.out, "build", "*_*"))
	if err != nil {
		return err
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		osArch := filepath.Base(dir)
		goos, goarch, ok := strings.Cut(osArch, "_")
		if !ok || goos == "deb" {
			continue
		}
		for _, program := range []string{"reportctl", "reportd"} {
			ext := ""
			if goos == "windows" {
				ext = ".exe"
			}
			if _, err := os.Stat(filepath.Join(dir, program+ext)); err != nil {
				continue
			}
			name := fmt.Sprintf("%s_%s_%s_%s.cdx.json", program, d.version, goos, goarch)
			serial := nameUUID("reportd/" + name)
			cmd := exec.Command(d.cyclonedx, "bin", "-json", "-notimestamp", "-serial", serial,
				"-version", d.version, "-output", filepath.Join(d.out, name), filepath.Join(dir, program+ext))
			cmd.Stderr = os.Stderr
			if out, err := cmd.Output(); err != nil {
				return fmt.Errorf("cyclonedx-gomod %s: %v\n%s", name, err, out)
			}
			d.artifacts = append(d.artifacts, name)
			fmt.Fprintf(os.Stderr, "dist: %s\n", name)
		}
	}
	return nil
}

// nameUUID is a name-based (version 5 style) UUID URN of name.
func nameUUID(name string) string {
	b := sha1.Sum([]byte(name))
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
