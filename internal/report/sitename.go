package report

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name limits: a whole path and one of its segments, in bytes.
const (
	MaxSiteNameLen    = 1024
	MaxSiteSegmentLen = 255
)

// CheckSiteName validates one file name of a site: a relative slash path of
// non-empty segments, valid UTF-8, no "." or ".." segment, no leading
// slash, no drive letter ("C:"), no backslash, no NUL or other control
// character, no invisible format character (bidi controls, zero-width
// characters: FormatChar, the rule single-file names follow), at most
// MaxSiteNameLen bytes and MaxSiteSegmentLen per segment. It is the one
// check every archive entry, part name, root and entry passes.
func CheckSiteName(name string) error { return CheckSiteNameShown(name, name) }

// CheckSiteNameShown checks name and names shown (the entry as the archive spells
// it) in the error.
func CheckSiteNameShown(name, shown string) error {
	bad := func(why string) error {
		return Errorf(Validation, "invalid file name %q in the site: %s", shown, why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxSiteNameLen:
		return bad("too long")
	case !utf8.ValidString(name):
		return bad("not UTF-8")
	case strings.HasPrefix(name, "/"):
		return bad("absolute path")
	case strings.Contains(name, "\\"):
		return bad("backslash")
	}
	for _, r := range name {
		if r == 0 || unicode.IsControl(r) {
			return bad("control character")
		}
	}
	if desc, at, found := FormatChar(name); found {
		return bad(fmt.Sprintf("it contains the invisible format character %s at byte %d", desc, at))
	}
	first := true
	for seg := range strings.SplitSeq(name, "/") {
		switch {
		case seg == "":
			return bad("empty segment")
		case seg == "." || seg == "..":
			return bad("dot segment")
		case len(seg) > MaxSiteSegmentLen:
			return bad("segment too long")
		case first && len(seg) >= 2 && seg[1] == ':' && ('a' <= seg[0]|0x20 && seg[0]|0x20 <= 'z'):
			return bad("drive letter")
		}
		first = false
	}
	return nil
}
