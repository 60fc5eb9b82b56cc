package cli

import (
	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
)

func newReportsDeleteCmd(f *Factory) *cobra.Command {
	return newDeleteCmd(f, deleteKind{
		noun:     "report",
		short:    "Delete a report",
		complete: completeReportIDs(f),
		del:      (*client.Client).DeleteReport,
	})
}
