package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/reportd/reportd/internal/exitcode"
)

// Main runs reportctl with the process's arguments and streams and returns
// its exit status; cmd/reportctl passes it to os.Exit.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, SystemIO(), os.Args[1:])
}

// Run executes one invocation; tests call it directly.
func Run(ctx context.Context, io *IOStreams, args []string) int {
	f := NewFactory(io)
	root := NewRootCommand(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitcode.OK
	}
	if ctx.Err() != nil {
		// Whatever the failure looked like, the user pressed Ctrl-C.
		fmt.Fprintln(io.ErrOut, "reportctl: interrupted")
		return exitcode.Interrupted
	}
	code := exitCodeOf(err)
	fmt.Fprintf(io.ErrOut, "reportctl: %s\n", errorMessage(err))
	if code == exitcode.Usage && cmd != nil {
		fmt.Fprintf(io.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}
