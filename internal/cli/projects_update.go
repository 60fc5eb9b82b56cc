package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/report"
)

type projectsUpdateOptions struct {
	f    *Factory
	id   int64
	in   report.ProjectUpdate
	json bool
}

func newProjectsUpdateCmd(f *Factory) *cobra.Command {
	var name, slug, description, cover string
	cmd := &cobra.Command{
		Use:   "update ID [--name NAME] [--slug SLUG] [--description TEXT] [--cover IMAGE]",
		Short: "Change a project's name, slug, description or cover",
		Long: `Change a project. Only the flags given are changed; --description "" clears
the description. --cover uploads a new cover image, replacing the old one.
A new --name keeps the project's slug, so its stable links (/p/SLUG/...)
keep working; --slug changes the slug (links with the old one stop
working). A slug is lower-case a-z, 0-9 and single '-', not all digits,
and no other project's.`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeProjectIDs(f),
		RunE: runWithID("project", func(cmd *cobra.Command, id int64) error {
			o := &projectsUpdateOptions{f: f, id: id, json: wantJSON(cmd)}
			fl := cmd.Flags()
			if fl.Changed("name") {
				o.in.Name = &name
			}
			if fl.Changed("slug") {
				o.in.Slug = &slug
			}
			if fl.Changed("description") {
				o.in.Description = &description
			}
			if fl.Changed("cover") {
				if _, err := os.Stat(cover); err != nil {
					return err
				}
				path := cover
				o.in.Cover = &report.Upload{
					FileName: filepath.Base(path),
					Open:     func() (io.ReadCloser, error) { return os.Open(path) },
				}
			}
			if o.in.Name == nil && o.in.Slug == nil && o.in.Description == nil && o.in.Cover == nil {
				return usageErrorf("nothing to change: give --name, --slug, --description or --cover")
			}
			return projectsUpdateRun(cmd.Context(), o)
		}),
	}
	cmd.Flags().StringVar(&name, "name", "", "new project name")
	cmd.Flags().StringVar(&slug, "slug", "", "new `SLUG` for stable links, such as acme-api")
	cmd.Flags().StringVar(&description, "description", "", "new description")
	cmd.Flags().StringVar(&cover, "cover", "", "new cover image `FILE`")
	cmd.MarkFlagFilename("cover", "png", "jpg", "jpeg", "gif", "webp")
	return cmd
}

func projectsUpdateRun(ctx context.Context, o *projectsUpdateOptions) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	p, err := c.UpdateProject(ctx, o.id, o.in)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, p)
	}
	return printProject(o.f.IO.Out, o.f.IO.OutTTY, c.StaticURL, p)
}
