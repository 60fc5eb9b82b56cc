package httpapi

import (
	"net/url"
	"strings"
)

// ContentDisposition builds `<kind>; filename="..."` per RFC 6266: an ASCII
// fallback in filename, and filename*=UTF-8”... when the name is not
// plain printable ASCII (RFC 5987).
func ContentDisposition(kind, name string) string {
	var ascii strings.Builder
	plain := true
	for _, r := range name {
		switch {
		case r == '"' || r == '\\':
			ascii.WriteByte('_')
			plain = false
		case r >= 0x20 && r < 0x7f:
			ascii.WriteRune(r)
		default:
			ascii.WriteByte('_')
			plain = false
		}
	}
	v := kind + `; filename="` + ascii.String() + `"`
	if !plain {
		v += "; filename*=UTF-8''" + pathEscape5987(name)
	}
	return v
}

// pathEscape5987 percent-encodes everything outside RFC 5987's attr-char.
func pathEscape5987(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(url.PathEscape(string([]byte{c}))[1:]))
		}
	}
	return b.String()
}
