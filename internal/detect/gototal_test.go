package detect

import "github.com/reportd/reportd/internal/detect/gototal"

// Detection in these tests computes go cover pages' totals, as the daemon's.
func init() { RegisterPageTotal(gototal.PageTotal) }
