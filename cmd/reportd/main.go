// Command reportd serves the Report Publishing Service API.
package main

import (
	"os"

	"github.com/reportd/reportd/cmd/reportd/commands"
)

func main() { os.Exit(commands.Main()) }
