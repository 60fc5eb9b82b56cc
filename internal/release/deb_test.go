package release_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/testbin"
)

// TestDebPackage inspects reportd_<version>_amd64.deb as an operator's
// tools see it, then runs the daemon and the CLI from the extracted tree
// with the packaged config.
func TestDebPackage(t *testing.T) {
	deb := debPath(t, dist(t))
	ver := version(t)

	info := run(t, "dpkg-deb", "-I", deb)
	for _, want := range []string{
		"Package: reportd\n", "Version: " + ver + "\n", "Architecture: amd64\n",
		"Depends: " + strings.Join(runtimeDeps(t), ", ") + "\n",
		" postinst ", " prerm ", " postrm ", " conffiles ",
	} {
		if !strings.Contains(info, want) {
			t.Errorf("dpkg-deb -I lacks %q:\n%s", want, info)
		}
	}
	tmp := t.TempDir()
	run(t, "dpkg-deb", "-e", deb, filepath.Join(tmp, "DEBIAN"))
	if cf, _ := os.ReadFile(filepath.Join(tmp, "DEBIAN", "conffiles")); strings.TrimSpace(string(cf)) != "/etc/reportd/reportd.yaml" {
		t.Errorf("conffiles: %q", cf)
	}

	contents := run(t, "dpkg-deb", "-c", deb)
	for _, want := range []string{
		"./usr/bin/reportd", "./usr/bin/reportctl",
		"./lib/systemd/system/reportd.service", "./etc/reportd/reportd.yaml",
		"./usr/share/man/man1/reportd.1.gz", "./usr/share/man/man1/reportctl.1.gz",
		"./usr/share/bash-completion/completions/reportctl", "./usr/share/zsh/vendor-completions/_reportctl",
		"./usr/share/fish/vendor_completions.d/reportctl.fish",
		"./usr/share/reportd/clients/checksums.txt", "./usr/share/reportd/clients/reportctl-windows-amd64.exe",
		"./usr/share/reportd/clients/reportctl-darwin-arm64", "./usr/share/doc/reportd/copyright",
	} {
		if !strings.Contains(contents, want+"\n") {
			t.Errorf("dpkg-deb -c lacks %s", want)
		}
	}

	if _, err := exec.LookPath("lintian"); err != nil {
		t.Error("lintian is not installed: bash scripts/install-deps.sh test")
	} else {
		// lintian exits non-zero on errors; warnings are listed in the log.
		out, err := exec.Command("lintian", "--no-tag-display-limit", deb).CombinedOutput()
		t.Logf("lintian:\n%s", out)
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "E: ") {
				t.Errorf("lintian error: %s", line)
			}
		}
		if err != nil && !strings.Contains(string(out), "E: ") {
			t.Errorf("lintian: %v", err)
		}
	}

	root := filepath.Join(tmp, "root")
	run(t, "dpkg-deb", "-x", deb, root)
	unit, err := os.ReadFile(filepath.Join(root, "lib/systemd/system/reportd.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ExecStart=/usr/bin/reportd serve --config /etc/reportd/reportd.yaml\n", "User=reportd\n", "StateDirectory=reportd\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("packaged unit lacks %q", want)
		}
	}
	if strings.Contains(string(unit), "DynamicUser=yes") {
		t.Error("packaged unit keeps DynamicUser: the package makes a static reportd user")
	}
	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		if out, err := exec.Command("systemd-analyze", "verify", filepath.Join(root, "lib/systemd/system/reportd.service")).CombinedOutput(); err != nil {
			t.Logf("systemd-analyze verify (informative: the binary path is not installed here): %v\n%s", err, out)
		}
	}

	reportd := filepath.Join(root, "usr/bin/reportd")
	reportctl := filepath.Join(root, "usr/bin/reportctl")
	for _, bin := range []string{reportd, reportctl} {
		if out := run(t, bin, "--version"); !strings.Contains(out, ver) {
			t.Errorf("%s --version: %q, want %s", filepath.Base(bin), out, ver)
		}
	}

	// A short serve + publish with the packaged config; clients.dir points
	// into the extracted tree instead of /usr/share/reportd/clients.
	clients := filepath.Join(root, "usr/share/reportd/clients")
	d := testbin.StartT(t, reportd, testbin.Options{
		DataDir: t.TempDir(),
		Config:  filepath.Join(root, "etc/reportd/reportd.yaml"),
		Env:     []string{"REPORTD_CLIENTS_DIR=" + clients, "REPORTD_CONVERT_WARM_ON_START=false"},
	})
	md := filepath.Join(t.TempDir(), "notes.md")
	os.WriteFile(md, []byte("# Packaged\n"), 0o644)
	out := run(t, reportctl, "--server", d.URL(), "upload", md, "--project-name", "deb", "--create-project", "--json")
	if !strings.Contains(out, `"fileName": "notes.md"`) && !strings.Contains(out, `"fileName":"notes.md"`) {
		t.Errorf("upload: %s", out)
	}
	ping := run(t, reportctl, "--server", d.URL(), "ping")
	if !strings.Contains(ping, ver) {
		t.Errorf("ping names %q, want version %s", ping, ver)
	}
	// The packaged clients are served, and match their checksums.
	res, err := http.Get(d.URL() + "/dl/reportctl/linux-amd64")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	sum := sha256.Sum256(body)
	sums, _ := os.ReadFile(filepath.Join(clients, "checksums.txt"))
	if res.StatusCode != 200 || !strings.Contains(string(sums), hex.EncodeToString(sum[:])+"  reportctl-linux-amd64\n") {
		t.Errorf("GET /dl/reportctl/linux-amd64: %d, sha256 %x not in\n%s", res.StatusCode, sum, sums)
	}
}
