package main

import (
	"os/exec"
	"strings"
	"testing"
)

// reportctl links no server package and none of the large tables the
// server needs (issue 23's size target; BENCHMARKS.md has the figure):
// the site store, blob stores, brotli, the Go parser that totals go cover
// pages (internal/detect/gototal, registered by the daemon) and x/text's
// table of every Unicode name.
func TestReportctlLinksNoServerPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"github.com/reportd/reportd/internal/site", "github.com/reportd/reportd/internal/blob",
			"github.com/reportd/reportd/internal/service", "github.com/reportd/reportd/internal/daemon",
			"github.com/reportd/reportd/internal/detect/gototal", "github.com/andybalholm/brotli",
			"go/parser", "golang.org/x/text/unicode/runenames",
		} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("reportctl links %s", dep)
			}
		}
	}
}
