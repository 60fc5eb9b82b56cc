package release_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// only is the part of `make dist` the tests build: one reportctl archive,
// the amd64 .deb (which holds reportctl for every platform) and their SBOMs.
const only = "reportctl-linux-amd64,deb-amd64,sbom"

var (
	distOnce sync.Once
	distDir  string
	distErr  error
)

// dist builds the artifacts once per test binary.
func dist(t *testing.T) string {
	t.Helper()
	needTool(t, "dpkg-deb")
	distOnce.Do(func() {
		distDir, distErr = os.MkdirTemp("", "reportd-dist-")
		if distErr == nil {
			distErr = runDist(distDir)
		}
	})
	if distErr != nil {
		t.Fatal(distErr)
	}
	return distDir
}

// runDist runs scripts/dist.sh into out.
func runDist(out string) error {
	cmd := exec.Command("bash", "scripts/dist.sh")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "DIST_DIR="+out, "DIST_ONLY="+only)
	b, err := cmd.CombinedOutput()
	if err != nil {
		return &distError{err, string(b)}
	}
	return nil
}

type distError struct {
	err error
	out string
}

func (e *distError) Error() string { return "scripts/dist.sh: " + e.err.Error() + "\n" + e.out }

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed (Debian; bash scripts/install-deps.sh test)", name)
	}
}

// version is what scripts/version.sh says for this checkout.
func version(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("bash", "../../scripts/version.sh").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// runtimeDeps are the packages `scripts/install-deps.sh run` installs.
func runtimeDeps(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../scripts/install-deps.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\nruntime=\(([^)]*)\)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/install-deps.sh: no runtime=(...)")
	}
	return strings.Fields(string(m[1]))
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

func debPath(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "reportd_"+version(t)+"_amd64.deb")
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMain(m *testing.M) {
	code := m.Run()
	if distDir != "" {
		os.RemoveAll(distDir)
	}
	os.Exit(code)
}
