package cli

import (
	"encoding/json"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// jsonFlag is the root's persistent --json; watch reads it by this name too.
const jsonFlag = "json"

// wantJSON reports whether --json is set on cmd or any parent.
func wantJSON(cmd *cobra.Command) bool {
	v, err := cmd.Flags().GetBool(jsonFlag)
	return err == nil && v
}

// writeJSON prints v indented; callers pass non-nil slices so empty lists are [].
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table prints rows aligned under a header on a terminal, and as bare
// tab-separated lines (no header) when piped, so `cut -f1` works.
type table struct {
	w      io.Writer
	tty    bool
	header []string
	rows   [][]string
}

func newTable(w io.Writer, tty bool, header ...string) *table {
	return &table{w: w, tty: tty, header: header}
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) print() error {
	if !t.tty {
		for _, r := range t.rows {
			for i := range r {
				r[i] = flatten(r[i])
			}
			if _, err := io.WriteString(t.w, strings.Join(r, "\t")+"\n"); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(t.w, 0, 4, 2, ' ', 0)
	io.WriteString(tw, strings.Join(t.header, "\t")+"\n")
	for _, r := range t.rows {
		for i := range r {
			r[i] = flatten(r[i])
		}
		io.WriteString(tw, strings.Join(r, "\t")+"\n")
	}
	return tw.Flush()
}

// flatten keeps one record on one line whatever a description contains.
func flatten(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// fields prints "name: value" lines for one object (the get commands).
func printFields(w io.Writer, tty bool, pairs ...string) error {
	t := &table{w: w, tty: true}
	for i := 0; i+1 < len(pairs); i += 2 {
		t.add(pairs[i]+":", pairs[i+1])
	}
	if !tty {
		// Piped: key<TAB>value, easy to grep/cut.
		for _, r := range t.rows {
			r[0] = strings.TrimSuffix(r[0], ":")
		}
		t.tty = false
		return t.print()
	}
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	for _, r := range t.rows {
		io.WriteString(tw, flatten(r[0])+"\t"+flatten(r[1])+"\n")
	}
	return tw.Flush()
}

// deleted is the --json output of the delete commands (the API answers 204).
type deleted struct {
	ID      int64 `json:"id"`
	Deleted bool  `json:"deleted"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
