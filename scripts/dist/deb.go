package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/deb"
)

// clientsDir lays out dist/clients as reportd's clients.dir: the bare
// reportctl binaries, reportctl-<os>-<arch>[.exe], and their checksums.txt.
// The .deb installs it at /usr/share/reportd/clients.
func (d *dist) clientsDir() (string, error) {
	dir := filepath.Join(d.out, "clients")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var sums []string
	for _, t := range clientTargets {
		name := "reportctl-" + t.os + "-" + t.arch + t.exe()
		data, err := os.ReadFile(filepath.Join(t.dir(d.out), "reportctl"+t.exe()))
		if err != nil {
			return "", fmt.Errorf("the .deb serves reportctl for every platform: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		sums = append(sums, hex.EncodeToString(sum[:])+"  "+name+"\n")
	}
	sort.Strings(sums)
	return dir, os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(strings.Join(sums, "")), 0o644)
}

// runtimeDepends are the packages `scripts/install-deps.sh run` installs:
// the engines, their sandbox and fonts. The .deb depends on exactly these.
func (d *dist) runtimeDepends() ([]string, error) {
	script, err := os.ReadFile(filepath.Join(d.repo, "scripts", "install-deps.sh"))
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`(?s)\nruntime=\(([^)]*)\)`).FindSubmatch(script)
	if m == nil {
		return nil, fmt.Errorf("scripts/install-deps.sh has no runtime=(...) list")
	}
	return strings.Fields(string(m[1])), nil
}

// deb packs reportd_<version>_<arch>.deb with nFPM from nfpm.yaml.
func (d *dist) deb(t target, clients string) error {
	stage := filepath.Join(d.out, "build", "deb_"+t.arch)
	if err := d.stageDeb(stage); err != nil {
		return err
	}
	vars := map[string]string{
		"VERSION": d.version,
		"ARCH":    t.arch,
		"BUILD":   t.dir(d.out),
		"STAGE":   stage,
		"CLIENTS": clients,
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.Chdir(d.repo); err != nil { // nfpm.yaml names sources from the root
		return err
	}
	defer os.Chdir(wd)
	cfg, err := nfpm.ParseFileWithEnvMapping("nfpm.yaml", func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return "" // never the caller's environment: same input, same package
	})
	if err != nil {
		return fmt.Errorf("nfpm.yaml: %w", err)
	}
	info, err := cfg.Get("deb")
	if err != nil {
		return err
	}
	if info.Depends, err = d.runtimeDepends(); err != nil {
		return err
	}
	info.MTime = d.epoch
	info = nfpm.WithDefaults(info)
	if err := nfpm.Validate(info); err != nil {
		return fmt.Errorf("nfpm.yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := deb.Default.Package(info, &buf); err != nil {
		return fmt.Errorf("packing the %s .deb: %w", t.arch, err)
	}
	if err := os.Chdir(wd); err != nil {
		return err
	}
	return d.artifact(fmt.Sprintf("reportd_%s_%s.deb", d.version, t.arch), buf.Bytes())
}

// stageDeb prepares what the package holds that is not a repository file
// as is: the unit adapted to the package (a static reportd user, /usr/bin),
// gzipped man pages, the copyright file and a changelog.
func (d *dist) stageDeb(stage string) error {
	for _, sub := range []string{"man", "doc"} {
		if err := os.MkdirAll(filepath.Join(stage, sub), 0o755); err != nil {
			return err
		}
	}
	unit, err := packagedUnit(filepath.Join(d.repo, "examples", "systemd", "reportd.service"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, "reportd.service"), unit, 0o644); err != nil {
		return err
	}
	man, err := filepath.Glob(filepath.Join(d.repo, "docs", "man", "*.1"))
	if err != nil {
		return err
	}
	for _, m := range man {
		data, err := os.ReadFile(m)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(stage, "man", filepath.Base(m)+".gz"), gzipBytes(data), 0o644); err != nil {
			return err
		}
	}
	copyright := `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: reportd
Source: https://github.com/reportd/reportd

Files: *
Copyright: 2026 The reportd authors
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this package except in compliance with the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0 can
 be found in "/usr/share/common-licenses/Apache-2.0".
`
	if err := os.WriteFile(filepath.Join(stage, "doc", "copyright"), []byte(copyright), 0o644); err != nil {
		return err
	}
	changelog := fmt.Sprintf("reportd (%s) unstable; urgency=medium\n\n  * Release %s, built by scripts/dist.sh.\n\n -- reportd maintainers <maintainers@reportd.invalid>  %s\n",
		d.version, d.version, d.epoch.Format(time.RFC1123Z))
	return os.WriteFile(filepath.Join(stage, "doc", "changelog.gz"), gzipBytes([]byte(changelog)), 0o644)
}

// packagedUnit is examples/systemd/reportd.service as the package installs
// it: the binary in /usr/bin, docs in /usr/share/doc, and the static
// reportd user the maintainer scripts make instead of a dynamic one (it
// owns /var/lib/reportd across upgrades and is removed on purge).
func packagedUnit(path string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := string(src)
	i := strings.Index(s, "[Unit]")
	if i < 0 {
		return nil, fmt.Errorf("%s: no [Unit]", path)
	}
	s = "# reportd as a systemd service, installed by the reportd package: enabled\n" +
		"# but not started. Read /etc/reportd/reportd.yaml, then systemctl start reportd.\n" +
		"# Override settings with systemctl edit reportd, not by editing this file.\n\n" + s[i:]
	for _, r := range [][2]string{
		{"/usr/local/bin/reportd", "/usr/bin/reportd"},
		{"file:///usr/local/share/doc/reportd/", "file:///usr/share/doc/reportd/"},
		{"DynamicUser=yes\n", "User=reportd\nGroup=reportd\n"},
		{"owned by the dynamic user.\n# (With DynamicUser systemd keeps it at /var/lib/private/reportd and links it.)", "owned by the reportd user."},
	} {
		if !strings.Contains(s, r[0]) {
			return nil, fmt.Errorf("%s: %q is gone; adapt packagedUnit in scripts/dist/deb.go", path, r[0])
		}
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return []byte(s), nil
}
