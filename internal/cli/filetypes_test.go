package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/report"
)

// TestTypeTableDrift holds what is written by hand about file types to the
// type table (report.Types): the OpenAPI FileType enum and input pattern,
// the dashboard's types.js, reportctl's help and its generated man page.
// Like TestConfigFileMatchesSettings for settings: a new row that misses
// one of them fails here, naming it.
func TestTypeTableDrift(t *testing.T) {
	var names []string
	for _, ti := range report.Types() {
		names = append(names, string(ti.Type))
	}
	if !slices.Equal(names, typeStrings(report.FileTypes)) {
		t.Fatalf("type table %v, public FileTypes %v: the table holds exactly the public types (tests register others)", names, report.FileTypes)
	}

	// The OpenAPI document.
	b, err := os.ReadFile(filepath.Join("..", "httpapi", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum    []string `json:"enum"`
				Pattern string   `json:"pattern"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if enum := doc.Components.Schemas["FileType"].Enum; !slices.Equal(enum, names) {
		t.Errorf("openapi.json FileType enum %v, want the table's %v", enum, names)
	}
	in := regexp.MustCompile(doc.Components.Schemas["FileTypeInput"].Pattern)
	for _, n := range names {
		for _, v := range []string{n, strings.ToUpper(n), " " + n + " "} {
			if !in.MatchString(v) {
				t.Errorf("openapi.json FileTypeInput refuses %q", v)
			}
		}
	}
	for _, v := range []string{"docx", "htm", "pptxx", "p", ""} {
		if in.MatchString(v) {
			t.Errorf("openapi.json FileTypeInput accepts %q, which is not in the table", v)
		}
	}

	// The dashboard's types.js: one entry per row with its label and name,
	// and the upload picker's accept list.
	b, err = os.ReadFile(filepath.Join("..", "web", "static", "js", "types.js"))
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	entries := regexp.MustCompile(`(?m)^\s+(\w+): \{ label: '([^']*)', name: '([^']*)' \},$`).FindAllStringSubmatch(js, -1)
	var got, want []string
	for _, e := range entries {
		got = append(got, e[1]+"|"+e[2]+"|"+e[3])
	}
	for _, ti := range report.Types() {
		want = append(want, string(ti.Type)+"|"+ti.Label+"|"+ti.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("types.js TYPES (key|label|name) %v, want the table's %v", got, want)
	}
	accept := regexp.MustCompile(`ACCEPT = '([^']*)'`).FindStringSubmatch(js)
	if accept == nil || !strings.HasPrefix(accept[1], report.TypeExts(",", ",")+",") {
		t.Errorf("types.js ACCEPT %q does not start with the table's extensions %q", accept, report.TypeExts(",", ","))
	}

	checkHelp(t, "")

	// The generated man pages (go run ./scripts/gencompletions).
	for _, page := range []string{"reportctl-upload.1", "reportctl-watch.1"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", "man", page))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), report.TypeExts(" ", " ")) {
			t.Errorf("docs/man/%s does not list %q: run go run ./scripts/gencompletions", page, report.TypeExts(" ", " "))
		}
	}
}

// TestHelpFollowsTypeTable: a row added to the table shows in reportctl's
// help and completions without touching the CLI.
func TestHelpFollowsTypeTable(t *testing.T) {
	remove := report.RegisterType(report.TypeInfo{Type: "docx", Exts: []string{".docx"}, MIME: "application/octet-stream",
		Container: report.ContainerZip, ZipPart: "word/document.xml", Engine: report.EngineOffice, Label: "DOCX", Name: "Word document"})
	defer remove()
	checkHelp(t, "docx")
}

// checkHelp checks that reportctl's help names every type of the table
// (and extra, when given), and offers each to --file-type's completion.
func checkHelp(t *testing.T, extra string) {
	t.Helper()
	root := NewRootCommand(NewFactory(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}))
	find := func(args ...string) *cobra.Command {
		cmd, _, err := root.Find(args)
		if err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	names, exts := report.TypeNames(", ", " or "), report.TypeExts(" ", " ")
	for _, c := range []struct{ where, text, want string }{
		{"reportctl's description", root.Long, report.TypeNames(", ", ", ")},
		{"upload's description", find("upload").Long, exts},
		{"upload --type", find("upload").Flag("type").Usage, names},
		{"reports update --file-type", find("reports", "update").Flag("file-type").Usage, names},
		{"watch's description", find("watch").Long, exts},
	} {
		if !strings.Contains(c.text, c.want) || (extra != "" && !strings.Contains(c.text, extra)) {
			t.Errorf("%s does not list the types %q (%q): %q", c.where, c.want, extra, c.text)
		}
	}
	upd := find("reports", "update")
	complete, ok := upd.GetFlagCompletionFunc("file-type")
	if !ok {
		t.Fatal("reports update --file-type has no completion")
	}
	offered, _ := complete(upd, nil, "")
	var want []string
	for _, ti := range report.Types() {
		want = append(want, string(ti.Type))
	}
	if !slices.Equal(offered, want) {
		t.Errorf("--file-type completes %v, want %v", offered, want)
	}
}

func typeStrings(ts []report.FileType) []string {
	var out []string
	for _, t := range ts {
		out = append(out, string(t))
	}
	return out
}
