package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// kind reads one setting's text (from reportd.yaml, a REPORTD_* variable or
// a flag) into its Config field, and writes it back as text.
type kind interface {
	set(c *Config, s string) error
	format(c *Config) string
	// list says whether reportd.yaml may give a YAML list (its items are
	// joined with commas, as the environment variable writes them).
	list() bool
}

// field is a kind for a field of type T: get finds the field in a Config.
type field[T any] struct {
	get   func(*Config) *T
	parse func(string) (T, error)
	show  func(T) string
	many  bool
}

func (f field[T]) list() bool { return f.many }

func (f field[T]) set(c *Config, s string) error {
	v, err := f.parse(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	*f.get(c) = v
	return nil
}

func (f field[T]) format(c *Config) string { return f.show(*f.get(c)) }

func text(get func(*Config) *string) kind {
	return field[string]{get: get, parse: func(s string) (string, error) { return s, nil }, show: same}
}

// nonEmpty is text that must not be empty.
func nonEmpty(get func(*Config) *string) kind {
	return field[string]{get: get, parse: func(s string) (string, error) {
		if s == "" {
			return "", fmt.Errorf("must not be empty")
		}
		return s, nil
	}, show: same}
}

// oneOf is text that must be one of choices.
func oneOf(get func(*Config) *string, choices ...string) kind {
	return field[string]{get: get, parse: func(s string) (string, error) {
		if !slices.Contains(choices, s) {
			return "", fmt.Errorf("must be %s, not %q", orList(choices), s)
		}
		return s, nil
	}, show: same}
}

// oneOfOrEmpty is oneOf that also takes "" (unset: another key decides).
func oneOfOrEmpty(get func(*Config) *string, choices ...string) kind {
	return field[string]{get: get, parse: func(s string) (string, error) {
		if s != "" && !slices.Contains(choices, s) {
			return "", fmt.Errorf("must be %s (or empty), not %q", orList(choices), s)
		}
		return s, nil
	}, show: same}
}

// zone is an IANA time zone name; empty means the system's local zone.
func zone(get func(*Config) *string) kind {
	return field[string]{get: get, parse: func(s string) (string, error) {
		if _, err := time.LoadLocation(s); err != nil {
			return "", fmt.Errorf("must be an IANA time zone such as Europe/Berlin, or empty for the local zone: %w", err)
		}
		return s, nil
	}, show: same}
}

func boolean(get func(*Config) *bool) kind {
	return field[bool]{get: get, parse: func(s string) (bool, error) {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return false, fmt.Errorf("must be true or false, not %q", s)
		}
		return b, nil
	}, show: strconv.FormatBool}
}

// count is a whole number >= 0.
func count(get func(*Config) *int) kind {
	return field[int]{get: get, parse: func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("must be a whole number >= 0, not %q", s)
		}
		return n, nil
	}, show: strconv.Itoa}
}

func duration(get func(*Config) *time.Duration) kind {
	return field[time.Duration]{get: get, parse: func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("must be a duration such as 500ms, 10s or 2m, not %q", s)
		}
		return d, nil
	}, show: time.Duration.String}
}

// days is an age in whole days: 0, 90d, 12w or 720h.
func days(get func(*Config) *int) kind {
	return field[int]{get: get, parse: func(s string) (int, error) {
		n, err := report.ParseAgeDays(s)
		if err != nil {
			return 0, fmt.Errorf("must be whole days such as 90d, 12w or 720h, or 0 for no limit, not %q", s)
		}
		return n, nil
	}, show: report.FormatAgeDays}
}

func size(get func(*Config) *ByteSize) kind {
	return field[ByteSize]{get: get, parse: ParseByteSize, show: func(b ByteSize) string { return strconv.FormatInt(int64(b), 10) }}
}

// size64 is a size (as size reads it) in an int64 field, for the engines'
// own settings (convert.Config).
func size64(get func(*Config) *int64) kind {
	return field[int64]{get: get, parse: func(s string) (int64, error) {
		b, err := ParseByteSize(s)
		return int64(b), err
	}, show: func(n int64) string { return strconv.FormatInt(n, 10) }}
}

// orNone reads a key's 0 ("none", "never", "no cap") as -1, the engines'
// word for it, where their 0 means their default; it writes -1 back as 0.
func orNone[T ~int | ~int64](k kind) kind {
	f := k.(field[T])
	parse, show := f.parse, f.show
	f.parse = func(s string) (T, error) {
		v, err := parse(s)
		if err == nil && v == 0 {
			v = -1
		}
		return v, err
	}
	f.show = func(v T) string { return show(max(v, 0)) }
	return f
}

func same(s string) string { return s }

// words is a list of strings: a YAML list, or comma-separated text.
func words(get func(*Config) *[]string) kind {
	return field[[]string]{get: get, parse: func(s string) ([]string, error) {
		var out []string
		for _, w := range strings.Split(s, ",") {
			if w = strings.TrimSpace(w); w != "" {
				out = append(out, w)
			}
		}
		return out, nil
	}, show: func(ws []string) string { return strings.Join(ws, ",") }, many: true}
}

func orList(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}

// positive is a whole number >= 1.
func positive(get func(*Config) *int) kind {
	return field[int]{get: get, parse: func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("must be a whole number >= 1, not %q", s)
		}
		return n, nil
	}, show: strconv.Itoa}
}
