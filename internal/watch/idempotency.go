package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
)

// idempotencyKey is the Idempotency-Key of publishing path (a file or a
// site's folder) with content sum into project: the same for every retry
// and across restarts of watch, so an upload whose answer was lost is
// never published twice; another content is another key.
func idempotencyKey(project int64, path, sum string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s", project, path, sum)))
	return "watch-" + hex.EncodeToString(h[:16])
}
