package cli

import (
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/report"
)

func newProjectsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "projects",
		Aliases: []string{"project"},
		Short:   "List, show, create, update and delete projects",
	}
	asGroup(cmd)
	cmd.AddCommand(
		newProjectsListCmd(f),
		newProjectsGetCmd(f),
		newProjectsCreateCmd(f),
		newProjectsUpdateCmd(f),
		newProjectsDeleteCmd(f),
		newProjectsRetentionCmd(f),
	)
	return cmd
}

// printProject is the detail view shared by get, create and update.
func printProject(w io.Writer, tty bool, site func(string) string, p report.Project) error {
	cover := deref(p.CoverImage)
	if cover != "" {
		cover = site(cover)
	}
	return printFields(w, tty,
		"id", itoa(p.ID),
		"name", p.Name,
		"slug", p.Slug,
		"description", deref(p.Description),
		"createdAt", p.CreatedAt.String(),
		"coverImage", cover,
		"reportCount", itoa(p.ReportCount),
		"todayNewReports", itoa(p.TodayNewReports),
		"retention", retentionSummary(p.Retention),
	)
}

// retentionSummary is a project's own policy in one line ("" for none:
// the server default applies).
func retentionSummary(r *report.Retention) string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.KeepLast != nil {
		parts = append(parts, "keepLast "+strconv.Itoa(*r.KeepLast))
	}
	if r.MaxAgeDays != nil {
		parts = append(parts, "maxAge "+report.FormatAgeDays(*r.MaxAgeDays))
	}
	if r.KeepNewestPerBranch != nil {
		parts = append(parts, "keepNewestPerBranch "+strconv.FormatBool(*r.KeepNewestPerBranch))
	}
	return strings.Join(parts, ", ")
}
