package cli

import (
	"runtime"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/version"
)

// Version is the build's label, shared with reportd (internal/version).
func Version() string { return version.String() }

type versionInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

func newVersionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print reportctl's version",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := versionInfo{Version: Version(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
			if wantJSON(cmd) {
				return writeJSON(f.IO.Out, v)
			}
			_, err := cmd.OutOrStdout().Write([]byte("reportctl " + v.Version + " (" + v.GoVersion + " " + v.OS + "/" + v.Arch + ")\n"))
			return err
		},
	}
}
