package office

import (
	"bytes"
	"os"
	"strconv"

	"github.com/reportd/reportd/internal/convert/engine"
)

// An office worker's soffice runs with RLIMIT_DATA = MaxWorkerRSS
// (office_helper.py). When a deck needs more, LibreOffice catches the failed
// allocation and reports a load error, as for a damaged file, and is left in
// a state that crashes on a later job. peakRSS tells the two apart: a job
// that failed after the worker's peak resident memory reached half the cap
// is taken to have run out of memory, and the worker is replaced.

// peakRSS returns the largest peak resident set (VmHWM), in bytes, of pid
// and its descendants.
func peakRSS(pid int) int64 {
	var peak int64
	if pid <= 0 {
		return 0
	}
	for _, p := range append([]int{pid}, engine.DescendantsOf(pid)...) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		if err != nil {
			continue
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
				kb, _ := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
				peak = max(peak, kb<<10)
			}
		}
	}
	return peak
}

// nearMemoryCap reports whether the worker's peak reached half its cap:
// a failed allocation is often one large request, made well below the cap.
// A soffice that died is gone from /proc; the helper reports its peak.
func (w *officeWorker) nearMemoryCap(died *sofficeDied) bool {
	limit := w.o.cfg.MaxWorkerRSS
	if limit <= 0 || w.cmd == nil {
		return false
	}
	if died != nil && died.peak >= limit/2 {
		return true
	}
	return peakRSS(w.cmd.Process.Pid) >= limit/2
}
