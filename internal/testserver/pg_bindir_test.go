package testserver

import (
	"strings"
	"testing"
)

// Without PostgreSQL the harness says how to install it (the tests that
// need it then fail with this message rather than skip).
func TestPGMissingSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := binDir(t.TempDir() + "/*/bin/initdb")
	if err == nil || !strings.Contains(err.Error(), "scripts/install-deps.sh test") {
		t.Fatalf("no PostgreSQL: %v", err)
	}
}
