package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	committed    = "../../completions"
	committedMan = "../../docs/man"
)

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

// TestManPagesUpToDate fails when a command, flag or help text changed and
// the committed man pages were not regenerated, or a page is left over from
// a command that is gone.
func TestManPagesUpToDate(t *testing.T) {
	pages, err := generateMan()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"reportctl.1", "reportctl-upload.1", "reportd.1", "reportd-serve.1"} {
		if _, ok := pages[want]; !ok {
			t.Errorf("no man page %s", want)
		}
	}
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(committedMan, name))
		if err != nil {
			t.Errorf("%s: %v (run: go run ./scripts/gencompletions)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs/man/%s is out of date: run go run ./scripts/gencompletions", name)
		}
	}
	entries, err := os.ReadDir(committedMan)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := pages[e.Name()]; !ok {
			t.Errorf("docs/man/%s belongs to no command: delete it", e.Name())
		}
	}
}

// TestManPagesDeterministic: two runs give the same bytes, and no page
// carries the date of the run.
func TestManPagesDeterministic(t *testing.T) {
	a, err := generateMan()
	if err != nil {
		t.Fatal(err)
	}
	b, err := generateMan()
	if err != nil {
		t.Fatal(err)
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between runs", name)
		}
		if !bytes.Contains(a[name], []byte(`"1" "`+manDate.Format("Jan 2006")+`"`)) {
			t.Errorf("%s: header lacks the fixed date %s", name, manDate.Format("Jan 2006"))
		}
	}
}

// TestManPagesRender: groff formats every committed page with all warnings
// on and none given, and the page names its command, as users will read it.
func TestManPagesRender(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff not installed")
	}
	entries, err := os.ReadDir(committedMan)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		cmd := exec.Command(groff, "-man", "-Tutf8", "-P-cbou", "-ww", filepath.Join(committedMan, e.Name()))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("%s: %v\n%s", e.Name(), err, stderr.String())
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".1")
		if text := strings.Join(strings.Fields(string(out)), " "); !strings.Contains(text, "NAME "+name+" - ") {
			t.Errorf("%s renders without naming %s:\n%.300s", e.Name(), name, out)
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
