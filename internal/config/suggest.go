package config

import (
	"strings"

	"github.com/agnivade/levenshtein"
)

// nearestKey is the known key closest to a misspelt one, "" when none is
// close: edit distance, where a key that only lacks or has a wrong section
// ("token" for auth.token) counts as one edit.
func nearestKey(name string) string {
	best, bestScore := "", 1<<30
	for _, s := range settings {
		score := levenshtein.ComputeDistance(name, s.key)
		if i := strings.LastIndexByte(s.key, '.'); i >= 0 {
			if d := levenshtein.ComputeDistance(lastPart(name), s.key[i+1:]) + 1; d < score {
				score = d
			}
		}
		if score < bestScore {
			best, bestScore = s.key, score
		}
	}
	if bestScore > max(2, len(name)/3) {
		return ""
	}
	return best
}

func lastPart(key string) string { return key[strings.LastIndexByte(key, '.')+1:] }

// hint is what to say after "unknown key NAME": the nearest key, or the
// keys of the section NAME names.
func hint(name, noun string, show func(key string) string) string {
	if isSection(name) {
		keys := sectionKeys(name)
		for i, k := range keys {
			keys[i] = show(k)
		}
		return " (" + name + " is a section; its " + noun + " are " + strings.Join(keys, ", ") + ")"
	}
	if k := nearestKey(name); k != "" {
		return " (did you mean " + show(k) + "?)"
	}
	return " (config/reportd.yaml lists every key)"
}
