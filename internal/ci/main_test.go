package ci

import (
	"testing"

	"github.com/reportd/reportd/internal/testserver"
)

// TestMain: testserver.Main lets this binary be the conversion children
// its tests start (internal/convert/reexec.go).
func TestMain(m *testing.M) { testserver.Main(m) }
