package convert

import (
	"os"

	"github.com/moby/sys/reexec"

	"github.com/reportd/reportd/internal/convert/engine"
)

// The conversion children (engine/childproc.go; the Markdown renderer registers
// itself in markdown/child.go) are the running binary (reexec.Self:
// /proc/self/exe, which survives a package upgrade replacing the file)
// started again with one of these names as argv[0].
// Registering takes nothing over: a binary becomes a child only through
// reexec.Init, which every binary that may start one calls first thing,
// in main (cmd/reportd, bench/convert) or TestMain (every test package that
// links this one).
const (
	trimChildName  = "reportd-trim-pdf"  // page selection: argv is src, ranges, out
	mergeChildName = "reportd-merge-pdf" // site merge: argv is out; stdin carries the parts as JSON
)

func init() {
	reexec.Register(trimChildName, func() { os.Exit(trimChild(os.Args[1:])) })
	reexec.Register(mergeChildName, func() { os.Exit(mergeChild(os.Args[1:])) })
}

// runChild runs t in a child (engine.RunChild) bounded by the Manager's
// job timeout and convert.max_worker_rss.
func (m *Manager) runChild(t engine.ChildTask) error {
	return engine.RunChild(m.ctx, m.cfg.JobTimeout, m.cfg.MaxWorkerRSS, t)
}
