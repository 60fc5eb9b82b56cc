package convert

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAutoSpares(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		tabs          int
		maxRSS, total int64
		want          int
	}{
		{2, gib, 24 * gib, 17},     // the defaults on a large machine
		{2, 4 * gib, 24 * gib, 24}, // capped at a burst's worth
		{2, 0, 0, 24},              // no bound known
		{2, gib, 4 * gib, 4},       // 1/32 of 4 GiB: 128 MiB
		{2, gib, 8 * gib, 8},       // 1/32 of 8 GiB: 256 MiB
		{2, gib, 1 * gib, 2},       // never fewer than tabs
		{4, 300 << 20, 24 * gib, 4},
	} {
		if got := autoSpares(tc.tabs, tc.maxRSS, tc.total); got != tc.want {
			t.Errorf("autoSpares(%d, %d MiB, %d MiB) = %d, want %d", tc.tabs, tc.maxRSS>>20, tc.total>>20, got, tc.want)
		}
	}
	if memTotal() <= 0 {
		t.Error("the machine's memory is unknown")
	}
}

func TestCgroupLimit(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]int64{"max\n": 0, "2147483648\n": 2 << 30, "": 0} {
		p := filepath.Join(dir, "memory.max")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := cgroupLimit(p); got != want {
			t.Errorf("cgroupLimit(%q) = %d, want %d", content, got, want)
		}
	}
	if got := cgroupLimit(filepath.Join(dir, "absent")); got != 0 {
		t.Errorf("absent file: %d", got)
	}
}
