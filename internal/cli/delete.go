package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
)

// deleteKind is what `projects delete` and `reports delete` differ in.
type deleteKind struct {
	noun, short string
	complete    cobra.CompletionFunc
	del         func(c *client.Client, ctx context.Context, id int64) error
}

type deleteOptions struct {
	f    *Factory
	kind deleteKind
	id   int64
	json bool
}

func newDeleteCmd(f *Factory, k deleteKind) *cobra.Command {
	return &cobra.Command{
		Use:               "delete ID",
		Aliases:           []string{"rm"},
		Short:             k.short,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: k.complete,
		RunE: runWithID(k.noun, func(cmd *cobra.Command, id int64) error {
			return deleteRun(cmd.Context(), &deleteOptions{f: f, kind: k, id: id, json: wantJSON(cmd)})
		}),
	}
}

func deleteRun(ctx context.Context, o *deleteOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	if err := o.kind.del(c, ctx, o.id); err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, deleted{ID: o.id, Deleted: true})
	}
	if o.f.IO.ErrTTY {
		fmt.Fprintf(o.f.IO.ErrOut, "Deleted %s %d\n", o.kind.noun, o.id)
	}
	return nil
}
