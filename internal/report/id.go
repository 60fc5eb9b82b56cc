package report

import "strconv"

// ParseID is the one rule for an id in a path, a query or a form field:
// decimal digits only (no sign, space or other spelling), at least 1, and
// within int64. field names the id in the ValidationError ("id", "projectId").
func ParseID(field, raw string) (int64, error) {
	bad := func() (int64, error) {
		return 0, Errorf(Validation, "%s must be a positive integer (got %q)", field, raw)
	}
	if raw == "" || len(raw) > 19 {
		return bad()
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return bad()
		}
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return bad()
	}
	return id, nil
}
