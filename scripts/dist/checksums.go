package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// checksums writes checksums.txt: the SHA-256 of every artifact, in
// sha256sum's format, sorted by name (`sha256sum -c checksums.txt`).
func (d *dist) checksums() error {
	sort.Strings(d.artifacts)
	var b strings.Builder
	for _, name := range d.artifacts {
		f, err := os.Open(filepath.Join(d.out, name))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		b.WriteString(hex.EncodeToString(h.Sum(nil)) + "  " + name + "\n")
	}
	return os.WriteFile(filepath.Join(d.out, "checksums.txt"), []byte(b.String()), 0o644)
}
