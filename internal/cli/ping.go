package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

type pingOptions struct {
	f    *Factory
	json bool
}

func newPingCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "ping",
		Short: "Check that the server answers",
		Long:  "Call the health check (GET /api/reports/ping) and print the server's version and time.",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pingRun(cmd.Context(), &pingOptions{f: f, json: wantJSON(cmd)})
		},
	}
}

func pingRun(ctx context.Context, o *pingOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	start := time.Now()
	p, err := c.Ping(ctx)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, p)
	}
	_, err = fmt.Fprintf(o.f.IO.Out, "%s: reportd %s, server time %s, %s round trip\n",
		c.Site(), p.Version, p.Timestamp.UTC().Format(time.RFC3339), time.Since(start).Round(time.Millisecond))
	return err
}
