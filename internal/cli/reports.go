package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/report"
)

func newReportsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "reports",
		Aliases: []string{"report"},
		Short:   "List, show, update, delete and fetch reports",
	}
	asGroup(cmd)
	cmd.AddCommand(
		newReportsListCmd(f),
		newReportsGetCmd(f),
		newReportsUpdateCmd(f),
		newReportsDeleteCmd(f),
		newReportsPreviewCmd(f),
		newReportsDownloadCmd(f),
		newReportsPDFCmd(f),
	)
	return cmd
}

// printReport is the detail view shared by get and update.
func printReport(w io.Writer, tty bool, c *client.Client, r report.Report) error {
	return printFields(w, tty,
		"id", itoa(r.ID),
		"projectId", itoa(r.ProjectID),
		"fileName", r.FileName,
		"fileType", string(r.FileType),
		"filePath", r.FilePath,
		"uploadTime", r.UploadTime.String(),
		"name", r.Name,
		"branch", orDash(r.Branch),
		"commit", orDash(r.Commit),
		"buildUrl", orDash(r.BuildURL),
		"buildId", orDash(r.BuildID),
		"dashboardUrl", r.DashboardURL,
		"previewUrl", c.PreviewURL(r.ID),
		"downloadUrl", c.DownloadURL(r.ID),
		"pdfUrl", c.PDFURL(r.ID),
	)
}
