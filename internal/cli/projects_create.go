package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/report"
)

type projectsCreateOptions struct {
	f           *Factory
	name        string
	description *string
	cover       string
	json        bool
}

func newProjectsCreateCmd(f *Factory) *cobra.Command {
	o := &projectsCreateOptions{f: f}
	var description string
	cmd := &cobra.Command{
		Use:   "create --name NAME [--description TEXT] [--cover IMAGE]",
		Short: "Create a project",
		Long: `Create a project. --cover reads a png, jpeg, gif or webp image and sends it
inline (as a data URL) in the request.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(o.name) == "" {
				return usageErrorf("--name is required")
			}
			if cmd.Flags().Changed("description") {
				o.description = &description
			}
			o.json = wantJSON(cmd)
			return projectsCreateRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "project name (required)")
	cmd.Flags().StringVar(&description, "description", "", "project description")
	cmd.Flags().StringVar(&o.cover, "cover", "", "cover image `FILE`")
	cmd.MarkFlagFilename("cover", "png", "jpg", "jpeg", "gif", "webp")
	return cmd
}

func projectsCreateRun(ctx context.Context, o *projectsCreateOptions) error {
	in := report.ProjectCreate{Name: o.name, Description: o.description}
	if o.cover != "" {
		data, err := coverDataURL(o.cover)
		if err != nil {
			return err
		}
		in.CoverImage = &data
	}
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	p, err := c.CreateProject(ctx, in)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.IO.Out, p)
	}
	return printProject(o.f.IO.Out, o.f.IO.OutTTY, c.StaticURL, p)
}

// maxCover keeps a mistaken --cover (a video, a disk image) from being
// base64-encoded into memory and posted.
const maxCover = 20 << 20

// coverDataURL reads an image file into a data URL; the media type is
// sniffed from the content, like the daemon does.
func coverDataURL(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("--cover: %w", err)
	}
	if st.Size() > maxCover {
		return "", fmt.Errorf("--cover: %s is %d bytes, more than the %d a cover may have", path, st.Size(), maxCover)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--cover: %w", err)
	}
	return "data:" + http.DetectContentType(b) + ";base64," + base64.StdEncoding.EncodeToString(b), nil
}
