package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/reportd/reportd/internal/report"
)

// idempotencyKey is the Idempotency-Key of publishing path (a file or a
// site's folder) with content sum and build metadata meta into project:
// the same for every retry and across restarts of watch, so an upload
// whose answer was lost is never published twice; another content or
// another build (a new commit in the same workspace) is another key.
func idempotencyKey(project int64, path, sum string, meta report.BuildMeta) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	m, _ := json.Marshal(meta) // pointers to strings: cannot fail
	h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s\x00%s", project, path, sum, m)))
	return "watch-" + hex.EncodeToString(h[:16])
}
