package httpapi

import "strings"

const upperHex = "0123456789ABCDEF"

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
			// Not url.PathEscape: it leaves ':', '=' and '@' alone, which would
			// produce a lone "%" and make clients drop filename* entirely.
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&0xf])
		}
	}
	return b.String()
}
