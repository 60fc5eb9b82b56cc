package service

import (
	"os"
	"testing"

	"github.com/moby/sys/reexec"
)

// TestMain lets this test binary be the conversion children it starts
// (internal/convert/reexec.go) before it runs any test.
func TestMain(m *testing.M) {
	if reexec.Init() {
		return
	}
	os.Exit(m.Run())
}
