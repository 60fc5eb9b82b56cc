package cli

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestCIExamples keeps examples/ci, the GitHub Action and the GitLab
// component honest: each file is valid YAML, every reportctl invocation in
// it names real commands and flags, and an example that runs no reportctl
// itself uses the action or the component (internal/ci runs those).
func TestCIExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "ci", "*.yml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v %v", files, err)
	}
	files = append(files, filepath.Join("..", "..", "action.yml"), filepath.Join("..", "..", "templates", "publish.yml"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var calls [][]string
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		for { // a component is two documents: its spec, then the job
			var doc yaml.Node
			if err := dec.Decode(&doc); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			walkStrings(&doc, func(s string) { calls = append(calls, reportctlCalls(s)...) })
		}
		usesOurs := regexp.MustCompile(`uses: reportd/reportd@|component: .*/publish@`).Match(b)
		if len(calls) == 0 && !usesOurs {
			t.Fatalf("%s: no reportctl invocation, and neither the action nor the component", file)
		}
		for _, args := range calls {
			root := NewRootCommand(NewFactory(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}))
			cmd, rest, err := root.Find(args)
			if err == nil {
				err = cmd.ParseFlags(rest)
			}
			if err != nil || cmd == root {
				t.Errorf("%s: reportctl %s: %v", filepath.Base(file), strings.Join(args, " "), err)
			}
		}
	}
}

func walkStrings(n *yaml.Node, f func(string)) {
	if n.Kind == yaml.ScalarNode {
		f(n.Value)
	}
	for _, c := range n.Content {
		walkStrings(c, f)
	}
}

var shellVar = regexp.MustCompile(`\$\{?\{?[A-Za-z_][A-Za-z0-9_.]*\}?\}?`)

// reportctlCalls extracts the arguments of each reportctl command line in
// a shell snippet (enough shell for the examples: quotes, line
// continuations, pipes and redirections end a command).
func reportctlCalls(script string) [][]string {
	script = strings.ReplaceAll(script, "\\\n", " ")
	var out [][]string
	for _, line := range strings.Split(script, "\n") {
		i := strings.Index(line, "reportctl ")
		if i < 0 || strings.Contains(line[:i], "/") || strings.Contains(line, "go install") || !commandStart(line[:i]) {
			continue
		}
		var args []string
		for _, tok := range shellWords(line[i+len("reportctl "):]) {
			if tok == "|" || tok == ">" || tok == "&&" || tok == ";" {
				break
			}
			args = append(args, shellVar.ReplaceAllString(tok, "x"))
		}
		out = append(out, args)
	}
	return out
}

// commandStart says whether what precedes "reportctl " on a line starts a
// command there (prose in descriptions and comments does not).
func commandStart(before string) bool {
	b := strings.TrimRight(before, " \t")
	return b == "" || strings.HasSuffix(b, "&&") || strings.HasSuffix(b, ";") || strings.HasSuffix(b, "|") || strings.HasSuffix(b, "$(") || strings.HasSuffix(b, "||")
}

func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
