package detect

import (
	"strings"
	"testing"
)

// TestProfileCountsDoNotOverflow: statement counts whose sum does not fit
// give no total, not one outside 0–100.
func TestProfileCountsDoNotOverflow(t *testing.T) {
	p := "mode: set\nx.go:1.1,2.2 9223372036854775807 1\nx.go:3.1,4.2 9223372036854775807 0\n"
	if total, _ := profileTotal(strings.NewReader(p)); total != nil {
		t.Fatalf("overflowing counts gave %v%%", *total)
	}
}
