package release_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReproducible builds the same artifacts a second time, into another
// folder, and wants the same bytes: checksums.txt (archive, .deb, SBOMs)
// and every file it lists.
func TestReproducible(t *testing.T) {
	first := dist(t)
	second := t.TempDir()
	if err := runDist(second); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(filepath.Join(first, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(second, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("checksums.txt differs between two builds:\n%s\n---\n%s", a, b)
	}
	want := []string{"reportctl_" + version(t) + "_linux_amd64.tar.gz", "reportd_" + version(t) + "_amd64.deb",
		"reportctl_" + version(t) + "_linux_amd64.cdx.json"}
	for _, name := range want {
		if !bytes.Contains(a, []byte("  "+name+"\n")) {
			t.Errorf("checksums.txt lacks %s:\n%s", name, a)
		}
	}
	t.Logf("checksums.txt of both builds:\n%s", a)
}
