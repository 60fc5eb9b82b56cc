// Command reportctl is the command-line client of the Report Publishing
// Service; see internal/cli.
package main

import (
	"os"

	"github.com/reportd/reportd/internal/cli"
)

func main() { os.Exit(cli.Main()) }
