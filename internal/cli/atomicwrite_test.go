package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.pdf")

	if n, err := writeFileAtomic(path, strings.NewReader("one"), false); err != nil || n != 3 {
		t.Fatalf("first write: %d %v", n, err)
	}
	_, err := writeFileAtomic(path, strings.NewReader("two"), false)
	var ex errExists
	if !errors.As(err, &ex) {
		t.Fatalf("second write without force: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("refused write changed the file: %q", b)
	}
	if err := checkWritable(path, false); !errors.As(err, &ex) {
		t.Fatalf("checkWritable: %v", err)
	}
	if _, err := writeFileAtomic(path, strings.NewReader("three"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "three" {
		t.Fatalf("forced write: %q", b)
	}

	// A failing source leaves neither the target nor a temp file behind.
	broken := filepath.Join(dir, "broken.html")
	if _, err := writeFileAtomic(broken, io.MultiReader(strings.NewReader("partial"), failingReader{}), false); err == nil {
		t.Fatal("no error from a failing reader")
	}
	if _, err := os.Stat(broken); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial file left: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "r.pdf" {
		t.Fatalf("directory should hold only r.pdf: %v", entries)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
