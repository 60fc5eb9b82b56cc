package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fileEntry is one key that reportd.yaml sets.
type fileEntry struct {
	set   setting
	value string // the scalar as written; "" for null
	line  int
}

// parseFile reads reportd.yaml into the keys it sets. Every key that is
// not a setting, and every value of the wrong shape (a list, a section
// where a value belongs or the reverse), is an error naming its line.
func parseFile(name string, b []byte) ([]fileEntry, []error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, []error{fmt.Errorf("config %s: %w", name, err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // empty, or only comments
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	w := fileWalker{name: name}
	w.mapping(root, "")
	return w.entries, w.errs
}

type fileWalker struct {
	name    string
	entries []fileEntry
	errs    []error
}

func (w *fileWalker) fail(n *yaml.Node, format string, args ...any) {
	w.errs = append(w.errs, fmt.Errorf("config %s:%d: %s", w.name, n.Line, fmt.Sprintf(format, args...)))
}

func (w *fileWalker) mapping(n *yaml.Node, section string) {
	if n.Kind != yaml.MappingNode {
		if section == "" {
			w.fail(n, "the file must be a mapping of keys to values")
		} else {
			w.fail(n, "%s is a section; write its keys below it (%s)", section, strings.Join(sectionKeys(section), ", "))
		}
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		for v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		key := k.Value
		if section != "" {
			key = section + "." + key
		}
		s, known := lookup(key)
		switch {
		case known && v.Kind == yaml.ScalarNode:
			value := v.Value
			if v.Tag == "!!null" {
				value = ""
			}
			w.entries = append(w.entries, fileEntry{set: s, value: value, line: k.Line})
		case known && v.Kind == yaml.SequenceNode && s.kind.list():
			w.sequence(k, v, s)
		case known:
			w.fail(k, "%s takes a single value", key)
		case isSection(key) && section == "":
			w.mapping(v, key)
		default:
			w.fail(k, "unknown key %s%s", key, hint(key, "keys", func(k string) string { return k }))
		}
	}
}

// sequence reads a YAML list of scalars as comma-separated text.
func (w *fileWalker) sequence(k, v *yaml.Node, s setting) {
	items := make([]string, 0, len(v.Content))
	for _, it := range v.Content {
		if it.Kind != yaml.ScalarNode || strings.Contains(it.Value, ",") {
			w.fail(it, "%s: each item must be a single value without commas", s.key)
			return
		}
		items = append(items, it.Value)
	}
	w.entries = append(w.entries, fileEntry{set: s, value: strings.Join(items, ","), line: k.Line})
}
