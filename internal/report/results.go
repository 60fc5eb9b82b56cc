package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
)

// Caps on what a report's Results keep (docs/api.md, "Per-test results"):
// a generator that lists more keeps the first MaxTests tests and
// MaxFiles files, with Truncated set. They bound the stored value (a
// few hundred kilobytes gzip'd at worst) and a comparison's work.
const (
	MaxTests = 20000
	MaxFiles = 20000
	// MaxTestField bounds a test's ID and Title (bytes; longer ones are cut).
	MaxTestField = 512
)

// AddTest appends t unless the cap is reached (then Truncated is set);
// long ids and titles are cut to MaxTestField.
func (r *Results) AddTest(t TestResult) {
	if len(r.Tests) >= MaxTests {
		r.Truncated = true
		return
	}
	t.ID, t.Title = cut(t.ID, MaxTestField), cut(t.Title, MaxTestField)
	if t.DurationMs < 0 {
		t.DurationMs = 0
	}
	r.Tests = append(r.Tests, t)
}

// AddFile appends f unless the cap is reached (then Truncated is set).
func (r *Results) AddFile(f FileCoverage) {
	if len(r.Files) >= MaxFiles {
		r.Truncated = true
		return
	}
	f.Path = cut(f.Path, MaxTestField)
	r.Files = append(r.Files, f)
}

// Empty reports whether r holds no test and no file.
func (r *Results) Empty() bool { return r == nil || (len(r.Tests) == 0 && len(r.Files) == 0) }

// DurationMs is the sum of the tests' durations.
func (r *Results) DurationMs() int64 {
	var n int64
	if r != nil {
		for _, t := range r.Tests {
			n += t.DurationMs
		}
	}
	return n
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Back off to a rune boundary.
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

// EncodeResults is the stored form of r in both stores: gzip'd JSON.
func EncodeResults(r *Results) ([]byte, error) {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// maxResultsJSON bounds a stored value's decoded size (the caps keep a
// real one far below it).
const maxResultsJSON = 64 << 20

// DecodeResults reads EncodeResults' form back.
func DecodeResults(b []byte) (*Results, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("stored results: %w", err)
	}
	var r Results
	if err := json.NewDecoder(io.LimitReader(zr, maxResultsJSON)).Decode(&r); err != nil {
		return nil, fmt.Errorf("stored results: %w", err)
	}
	return &r, nil
}
