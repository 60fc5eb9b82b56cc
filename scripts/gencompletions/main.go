// Command gencompletions writes the bash, zsh, fish and PowerShell
// completion scripts of reportctl and reportd into completions/, and their
// man pages into docs/man/. The output depends only on the command trees,
// so it is committed and a test fails when it drifts:
//
//	go run ./scripts/gencompletions            # from the repository root
//	go run ./scripts/gencompletions -o DIR -man DIR
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/cmd/reportd/commands"
	"github.com/reportd/reportd/internal/cli"
)

func main() {
	out := flag.String("o", "completions", "output directory of the completion scripts")
	manOut := flag.String("man", filepath.Join("docs", "man"), "output directory of the man pages")
	flag.Parse()
	files, err := generate()
	if err == nil {
		err = write(*out, files)
	}
	var pages map[string][]byte
	if err == nil {
		pages, err = generateMan()
	}
	if err == nil {
		err = write(*manOut, pages)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencompletions:", err)
		os.Exit(1)
	}
}

// roots are the programs whose completions are generated.
func roots() []*cobra.Command {
	quiet := &cli.IOStreams{In: bytes.NewReader(nil), Out: io.Discard, ErrOut: io.Discard}
	return []*cobra.Command{
		cli.NewRootCommand(cli.NewFactory(quiet)),
		commands.NewRootCommand(),
	}
}

// generate returns file name → content for every program and shell, the
// same scripts `<program> completion <shell>` prints (with descriptions).
func generate() (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, root := range roots() {
		name := root.Name()
		gens := map[string]func(io.Writer) error{
			name + ".bash": func(w io.Writer) error { return root.GenBashCompletionV2(w, true) },
			name + ".zsh":  root.GenZshCompletion,
			name + ".fish": func(w io.Writer) error { return root.GenFishCompletion(w, true) },
			name + ".ps1":  root.GenPowerShellCompletionWithDesc,
		}
		for file, gen := range gens {
			var b bytes.Buffer
			if err := gen(&b); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			files[file] = b.Bytes()
		}
	}
	return files, nil
}

// generateMan returns file name → content of every man page of both programs.
func generateMan() (map[string][]byte, error) {
	all := map[string][]byte{}
	for _, root := range roots() {
		if root.Name() == "reportctl" {
			root.Long += "\n\n" + cli.ManSections()
		}
		pages, err := manPages(root)
		if err != nil {
			return nil, fmt.Errorf("%s man pages: %w", root.Name(), err)
		}
		maps.Copy(all, pages)
	}
	return all, nil
}

func write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}
