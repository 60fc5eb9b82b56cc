package cli

import (
	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
)

func newProjectsDeleteCmd(f *Factory) *cobra.Command {
	return newDeleteCmd(f, deleteKind{
		noun:     "project",
		short:    "Delete a project and all of its reports",
		complete: completeProjectIDs(f),
		del:      (*client.Client).DeleteProject,
	})
}
