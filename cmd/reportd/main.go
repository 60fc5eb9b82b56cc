// Command reportd serves the Report Publishing Service API.
package main

import (
	"os"

	"github.com/reportd/reportd/internal/daemon"
)

func main() { os.Exit(daemon.Main()) }
