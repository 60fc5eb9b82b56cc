package detect

import (
	"io"
	"strings"
	"testing"
)

// TestCoveragePyStatusJSONHostile: status.json is read with the json v2
// decoder; invalid UTF-8 and a repeated name, which encoding/json took,
// are still taken; what is not JSON, too deep, of the wrong shape or
// followed by more bytes (encoding/json's Decoder read the first value and
// stopped) gives no figures and no failure.
func TestCoveragePyStatusJSONHostile(t *testing.T) {
	entry := func(name, file string, nums string) string {
		return `"` + name + `":{"hash":"x","index":{"nums":` + nums + `,"html_filename":"a.html","relative_filename":"` + file + `"}}`
	}
	for _, tc := range []struct {
		name, json string
		want       []string // paths with figures, in order
	}{
		{"plain", `{"format":2,"files":{` + entry("a", "a.py", "[0,1,4,0,1]") + `,` + entry("b", "b.py", "[0,1,2,0,0]") + `}}`, []string{"a.py", "b.py"}},
		{"invalid UTF-8 kept", `{"files":{` + entry("a", "caf\xe9.py", "[0,1,4,0,1]") + `}}`, []string{"caf\uFFFD.py"}},
		{"a repeated name: the last", `{"files":{` + entry("a", "old.py", "[0,1,4,0,1]") + `,` + entry("a", "new.py", "[0,1,4,0,1]") + `}}`, []string{"new.py"}},
		{"numbers out of range skipped", `{"files":{` + entry("a", "a.py", "[0,1,4,0,9]") + `,` + entry("b", "b.py", "[0,1]") + `}}`, nil},
		{"wrong shape", `{"files":[1,2,3]}`, nil},
		{"not JSON", `{"files":{` + entry("a", "a.py", "[0,1,4,0,1]"), nil},
		{"deep", `{"files":` + strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000) + `}`, nil},
		{"trailing bytes", `{"files":{` + entry("a", "a.py", "[0,1,4,0,1]") + `}} {}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(tc.json)), nil }
			r := Results(CoveragePy, []string{"htmlcov/status.json"}, open)
			var got []string
			if r != nil {
				for _, f := range r.Files {
					got = append(got, f.Path)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("files %q, want %q", got, tc.want)
			}
		})
	}
}
