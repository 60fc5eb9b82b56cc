package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const committed = "../../completions"

// TestCompletionsUpToDate fails when a command or flag changed and the
// committed scripts were not regenerated.
func TestCompletionsUpToDate(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 {
		t.Fatalf("generated %d files, want 8 (2 programs x 4 shells)", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil {
			t.Errorf("%s: %v (run: go run ./scripts/gencompletions)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("completions/%s is out of date: run go run ./scripts/gencompletions", name)
		}
	}
}

// TestGenerateDeterministic: two runs give the same bytes.
func TestGenerateDeterministic(t *testing.T) {
	a, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between runs", name)
		}
	}
}

// TestBashCompletionSources loads the committed bash scripts into a real
// bash and checks the completion is registered.
func TestBashCompletionSources(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	for _, prog := range []string{"reportctl", "reportd"} {
		script := filepath.Join(committed, prog+".bash")
		out, err := exec.Command(bash, "-c", "source "+script+" && complete -p "+prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", prog, err, out)
		}
		if !strings.Contains(string(out), prog) || !strings.HasPrefix(string(out), "complete ") {
			t.Fatalf("%s: complete -p says %q", prog, out)
		}
	}
}
