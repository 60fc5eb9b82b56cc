package report

import (
	"strings"
	"time"
)

// LocalLayout is the API's date-time form: ISO 8601 with no zone designator.
const LocalLayout = "2006-01-02T15:04:05"

// LocalTime marshals as LocalLayout in the time's own location. The daemon
// puts times in its configured zone before they are encoded.
type LocalTime struct{ time.Time }

func (t LocalTime) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(LocalLayout)+2)
	b = append(b, '"')
	b = t.AppendFormat(b, LocalLayout)
	return append(b, '"'), nil
}

func (t *LocalTime) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		t.Time = time.Time{}
		return nil
	}
	// Accept fractional seconds and zones too, so other servers interoperate.
	for _, layout := range []string{LocalLayout, "2006-01-02T15:04:05.999999999", time.RFC3339Nano} {
		if v, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			t.Time = v
			return nil
		}
	}
	return Errorf(Validation, "bad date-time %q", s)
}

func (t LocalTime) String() string { return t.Format(LocalLayout) }
