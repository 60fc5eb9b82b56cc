package convert

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Spare pages by default (convert.chromium_spares = 0). A page made ahead
// is a fresh browser context with its renderer started and its origin's
// warm document laid out (chromium/warmdoc.go): ~16 MiB (PSS) while it
// waits, and ~85 ms of CPU to make. Made
// beside a job, that CPU is what makes back-to-back first PDFs 2x slower on
// two cores; made ahead, a burst of first PDFs (a CI run publishing its
// reports) prints with nothing else running (BENCHMARKS.md, "PDF latency").
// So the pool is as deep as a CI run's burst where memory allows it.
const (
	maxAutoSpares = 24       // a burst's worth; deeper pools measured no better
	sparePSS      = 16 << 20 // what a waiting page costs, measured (15.6 MiB)
	// A finished page waits frozen until idle (chromium/chromium_retire.go),
	// at most as many as there are spares: a burst as long as the pool
	// holds twice the pool, plus the browser's own ~200 MiB.
	browserBase = 200 << 20
)

// autoSpares is the default pool depth, total the machine's memory (0:
// unknown): up to maxAutoSpares, with the pool
// and the finished pages waiting beside it (2 x sparePSS a page) within
// 1/32 of the machine's memory and within 3/4 of the browser's memory
// bound (maxRSS, convert.max_worker_rss, over which the browser is
// replaced with every page it holds), and never fewer than tabs. At the
// default bound (1 GiB): 4 on 4 GiB, 8 on 8 GiB, 17 from 17 GiB.
func autoSpares(tabs int, maxRSS, total int64) int {
	n := maxAutoSpares
	if total > 0 {
		n = min(n, int(total/32/(2*sparePSS)))
	}
	if maxRSS > 0 {
		n = min(n, int((maxRSS/4*3-browserBase)/(2*sparePSS)))
	}
	return max(n, tabs)
}

// memTotal is the memory reportd may use, in bytes, 0 if unknown: the
// machine's, or its cgroup's limit (a container's) when lower.
func memTotal() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	total := int64(si.Totalram) * int64(si.Unit)
	if lim := cgroupLimit("/sys/fs/cgroup/memory.max"); lim > 0 && lim < total {
		return lim
	}
	return total
}

// cgroupLimit reads a cgroup v2 memory limit file: 0 when absent or "max".
func cgroupLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
