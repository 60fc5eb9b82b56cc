package httpapi

// AccessPatterns lists the rows of the access matrix, for the token tests
// to prove they walk every one.
func AccessPatterns() []string {
	out := make([]string, 0, len(access))
	for p := range access {
		out = append(out, p)
	}
	return out
}
