package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

const module = "github.com/reportd/reportd/cmd/"

// Build compiles the named commands (for example "reportd", "reportctl")
// into dir, one `go build` for all of them, each binary named after its
// command. It builds without -race even under `go test -race`: the tests
// that use the binaries exercise what users run, and the race detector
// covers the same code in the in-process tests.
func Build(dir string, cmds ...string) error {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, c := range cmds {
		args = append(args, module+c)
	}
	out, err := exec.Command(goTool(), args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %v: %v\n%s", cmds, err, out)
	}
	return nil
}

// BuildTemp is Build into a new temporary directory named after pattern
// (as os.MkdirTemp). The caller removes dir when done; on error nothing is
// left behind.
func BuildTemp(pattern string, cmds ...string) (dir string, err error) {
	dir, err = os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	if err := Build(dir, cmds...); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// goTool prefers the toolchain that built the running program, so a test
// run never picks up a different `go` from PATH.
func goTool() string {
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}
