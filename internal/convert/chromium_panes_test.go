package convert

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// goCoverReport writes a tiny Go module with two files and a test, and
// returns the HTML report go tool cover makes of its coverage.
func goCoverReport(t *testing.T) []byte {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":    "module example.com/cov\n\ngo 1.21\n",
		"alpha.go":  "package cov\n\nfunc AlphaSign(x int) int {\n\tif x > 0 {\n\t\treturn 1\n\t}\n\treturn -1\n}\n",
		"bravo.go":  "package cov\n\nfunc BravoJoin(s string) string {\n\treturn s + \"-bravo\"\n}\n",
		"a_test.go": "package cov\n\nimport \"testing\"\n\nfunc TestAlpha(t *testing.T) { AlphaSign(1) }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"test", "-coverprofile=c.out", "."},
		{"tool", "cover", "-html=c.out", "-o", "out.html"},
	} {
		cmd := exec.Command(gobin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.html"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A go tool cover -html report prints every file, each under its name, not
// only the one its <select> shows.
func TestGoCoverReportPrintsEveryFile(t *testing.T) {
	needChromium(t)
	src := goCoverReport(t)
	if !allPanes(src) {
		t.Fatal("the go cover report is not recognised")
	}
	text := pdfText(t, convertOK(t, sharedManager(t), jobFor(t, report.HTML, src)))
	wantText(t, text, "example.com/cov/alpha.go", "func AlphaSign", "example.com/cov/bravo.go", "func BravoJoin")
}
