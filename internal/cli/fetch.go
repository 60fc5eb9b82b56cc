package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/client"
)

// fetchKind is what preview, download and pdf differ in.
type fetchKind struct {
	use, short, long string
	get              func(c *client.Client, ctx context.Context, id int64) (*client.Stream, error)
	// toStdout: with no -o, write to stdout rather than to a file.
	toStdout bool
	// fallback names the file when the server sends no usable name.
	fallback func(id int64) string
}

type fetchOptions struct {
	f      *Factory
	kind   fetchKind
	id     int64
	output string
	force  bool
	json   bool
}

// fetchResult is the --json output of a fetch written to a file.
type fetchResult struct {
	ID          int64  `json:"id"`
	Path        string `json:"path"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType"`
}

func newFetchCmd(f *Factory, k fetchKind) *cobra.Command {
	o := &fetchOptions{f: f, kind: k}
	cmd := &cobra.Command{
		Use:               k.use,
		Short:             k.short,
		Long:              k.long,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeReportIDs(f),
		RunE: runWithID("report", func(cmd *cobra.Command, id int64) error {
			o.id, o.json = id, wantJSON(cmd)
			return fetchRun(cmd.Context(), o)
		}),
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "write to `FILE` (a directory: the server's file name inside it; - for stdout)")
	cmd.Flags().BoolVarP(&o.force, "force", "f", false, "overwrite an existing file")
	return cmd
}

func fetchRun(ctx context.Context, o *fetchOptions) error {
	toStdout := o.output == "-" || (o.output == "" && o.kind.toStdout)
	dir := ""
	if !toStdout && o.output != "" {
		if st, err := os.Stat(o.output); err == nil && st.IsDir() {
			dir = o.output
		} else if err := checkWritable(o.output, o.force); err != nil {
			return err // refuse before downloading anything
		}
	}
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	s, err := o.kind.get(c, ctx, o.id)
	if err != nil {
		return err
	}
	defer s.Close()

	if toStdout {
		if o.f.IO.OutTTY && !isText(s.ContentType) {
			return fmt.Errorf("not writing %s to a terminal: use -o FILE, or pipe the output", s.ContentType)
		}
		_, err := io.Copy(o.f.IO.Out, s)
		return err
	}
	path := o.output
	if path == "" || dir != "" {
		name := s.FileName
		if name == "" {
			name = o.kind.fallback(o.id)
		}
		path = filepath.Join(dir, name)
		if err := checkWritable(path, o.force); err != nil {
			return err
		}
	}

	pr := newProgress(ctx, o.f.IO, o.json)
	b := pr.bar(filepath.Base(path), s.Size)
	n, err := writeFileAtomic(path, b.reader(s), o.force)
	b.done(err == nil)
	pr.wait()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ex errExists
		if errors.As(err, &ex) {
			return err
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if o.json {
		return writeJSON(o.f.IO.Out, fetchResult{ID: o.id, Path: path, Size: n, ContentType: s.ContentType})
	}
	_, err = fmt.Fprintln(o.f.IO.Out, path)
	return err
}

// isText reports whether a content type is safe to print on a terminal.
func isText(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && (strings.HasPrefix(t, "text/") || t == "application/json")
}

func newReportsPreviewCmd(f *Factory) *cobra.Command {
	return newFetchCmd(f, fetchKind{
		use:   "preview ID [-o FILE]",
		short: "Print a report's content as served for inline display",
		long: `Fetch the report as the preview endpoint serves it (html, markdown, pdf or
Office content) and write it to stdout, or to a file with -o.`,
		get:      (*client.Client).Preview,
		toStdout: true,
		fallback: func(id int64) string { return "report-" + itoa(id) },
	})
}

func newReportsDownloadCmd(f *Factory) *cobra.Command {
	return newFetchCmd(f, fetchKind{
		use:   "download ID [-o FILE]",
		short: "Download a report's original file",
		long: `Download the original file. Without -o it is saved in the current directory
under the name the server gives (Content-Disposition). An existing file is
never replaced unless --force is given; the file appears only once complete.
Prints the path written.`,
		get:      (*client.Client).Download,
		fallback: func(id int64) string { return "report-" + itoa(id) },
	})
}

func newReportsPDFCmd(f *Factory) *cobra.Command {
	pf := &printFlags{}
	cmd := newFetchCmd(f, fetchKind{
		use:   "pdf ID [-o FILE]",
		short: "Download a report converted to PDF",
		long: `Download the report converted to PDF. Without -o it is saved in the current
directory under the name the server gives (Content-Disposition). An existing
file is never replaced unless --force is given; the file appears only once
complete. Prints the path written.

Print options (HTML and Markdown reports; the wait flags HTML only) ask the
daemon for a variant, e.g. --paper Letter --landscape --page-ranges 1-3.
Flags not given are not sent: without any, the PDF is the default print.`,
		get:      pf.get,
		fallback: func(id int64) string { return "report-" + itoa(id) + ".pdf" },
	})
	pf.bind(cmd.Flags())
	return cmd
}
