package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// Merging the printed pages of a site (scope=site) holds every page's PDF
// in pdfcpu's memory at once, for up to Config.SiteMaxPages pages. Like
// selecting pages of a stored PDF (pdfpages_proc.go), it runs in a child
// process (engine/childproc.go), the running binary as mergeChildName, whose data segment
// is capped at Config.MaxWorkerRSS and which is killed at the job's
// deadline. The caller holds the job's slot of the Chromium gate.

// mergeChildStall makes the child wait until killed; tests use it to stand
// in for a merge that takes too long.
const mergeChildStall = "REPORTD_MERGE_PDF_TEST_STALL"

// mergeChild merges (see childMain); stdin carries the parts as JSON
// ([]sitePart).
func mergeChild(args []string) int {
	return engine.ChildMain(os.Getenv(mergeChildStall) == "1", func() error {
		var parts []sitePart
		if len(args) != 1 || json.NewDecoder(os.Stdin).Decode(&parts) != nil {
			return engine.ErrChildArgs
		}
		return mergePDFs(parts, args[0])
	})
}

// mergeParts merges parts into out in a child, bounded as described above.
func (m *Manager) mergeParts(parts []sitePart, out string) error {
	in, err := json.Marshal(parts)
	if err != nil {
		return report.Wrap(report.Internal, err, "cannot list the printed pages")
	}
	return m.runChild(engine.ChildTask{
		Name:   mergeChildName,
		Args:   []string{out},
		Stdin:  bytes.NewReader(in),
		Start:  "cannot start merging the site's pages",
		Slow:   fmt.Sprintf("merging the site's %d pages", len(parts)),
		Failed: "merging the site's pages",
	})
}
