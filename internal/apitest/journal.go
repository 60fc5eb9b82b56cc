package apitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// WaitJournal waits (at most a minute) until the local store's journal
// below dataDir holds no pack and no unpacker's temp file: every committed
// site file is then its own file below uploads/ (docs/sites.md), for
// tests that look at the data directory itself.
func WaitJournal(t testing.TB, dataDir string) {
	t.Helper()
	dir := filepath.Join(dataDir, "uploads", ".journal")
	deadline := time.Now().Add(time.Minute)
	for {
		var busy []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if n := e.Name(); strings.HasSuffix(n, ".pack") || strings.HasPrefix(n, "unpack-") {
				busy = append(busy, n)
			}
		}
		if len(busy) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store's journal still holds %v after a minute", busy)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
