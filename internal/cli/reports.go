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
	site := []string{"kind", orDash(&r.Kind)}
	if r.IsSite() {
		site = append(site, "entry", orDash(&r.Entry), "files", itoa(int64(r.Files)), "bytes", sizeOf(r.Bytes, tty))
	}
	site = append(site, "siteUrl", orDash(&r.SiteURL))
	fields := append([]string{
		"id", itoa(r.ID),
		"projectId", itoa(r.ProjectID),
		"fileName", r.FileName,
		"fileType", string(r.FileType)}, site...)
	fields = append(fields,
		"filePath", r.FilePath,
		"uploadTime", r.UploadTime.String(),
		"name", r.Name,
		"branch", orDash(r.Branch),
		"commit", orDash(r.Commit),
		"buildUrl", orDash(r.BuildURL),
		"buildId", orDash(r.BuildID))
	fields = append(fields, figureFields(r)...)
	fields = append(fields,
		"dashboardUrl", r.DashboardURL,
		"previewUrl", c.PreviewURL(r.ID),
		"downloadUrl", c.DownloadURL(r.ID),
		"pdfUrl", c.PDFURL(r.ID),
	)
	return printFields(w, tty, fields...)
}

// sizeOf is n bytes for people (1.2 MiB) on a terminal, the number when piped.
func sizeOf(n int64, tty bool) string {
	if tty {
		return sizeIEC(n)
	}
	return itoa(n)
}
