// Command reportd serves the Report Publishing Service API.
package main

import (
	"os"

	"github.com/moby/sys/reexec"

	"github.com/reportd/reportd/cmd/reportd/commands"
)

func main() {
	// A conversion child (internal/convert/reexec.go) is this binary started
	// again under a registered name: it runs that child's work and exits.
	if reexec.Init() {
		return
	}
	os.Exit(commands.Main())
}
