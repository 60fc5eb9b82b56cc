package convert

import (
	"sync"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// failures remembers, for a short while, conversions that failed because of
// the document (report.Conversion: damaged, too costly, timed out; not
// engineFault), keyed
// like the PDF cache by report, content and variant. A second request for
// the same broken report gets the same error at once instead of another
// engine's time: six hanging reports asked for again and again cannot keep
// the engines busy. A changed report has another content key, and Forget
// drops a report's entries, so an edit or a delete starts afresh.
type failures struct {
	ttl time.Duration // <=0: nothing is remembered

	mu sync.Mutex
	m  map[string]failure // by cache path
}

type failure struct {
	reportID int64
	err      error
	until    time.Time
}

// failuresMax bounds the entries kept; expired ones go first.
const failuresMax = 4096

func newFailures(ttl time.Duration) *failures {
	return &failures{ttl: ttl, m: map[string]failure{}}
}

// get returns the remembered error of the job whose PDF would be at path.
func (f *failures) get(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.m[path]
	if !ok {
		return nil
	}
	if time.Now().After(e.until) {
		delete(f.m, path)
		return nil
	}
	return e.err
}

// put remembers err if it is the document's fault: a ConversionError not
// marked as the engine's (engine.Fault).
func (f *failures) put(reportID int64, path string, err error) {
	if f.ttl <= 0 || !report.IsKind(err, report.Conversion) || engine.IsFault(err) {
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.m) >= failuresMax {
		for k, e := range f.m {
			if now.After(e.until) {
				delete(f.m, k)
			}
		}
		for k := range f.m {
			if len(f.m) < failuresMax {
				break
			}
			delete(f.m, k)
		}
	}
	f.m[path] = failure{reportID: reportID, err: err, until: now.Add(f.ttl)}
}

// forget drops every failure remembered for the report.
func (f *failures) forget(reportID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, e := range f.m {
		if e.reportID == reportID {
			delete(f.m, k)
		}
	}
}
