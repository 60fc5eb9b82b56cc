// Package badge draws README badges: a flat two-part SVG like shields.io's
// (label on grey, message on a colour), sized from per-character advance
// widths of Verdana at 11px so that no browser or font file is needed,
// and the shields.io endpoint JSON for the same badge.
package badge

import (
	"bytes"
	"encoding/xml"
	"strconv"
)

// Badge is what a badge shows.
type Badge struct {
	Label   string
	Message string
	Color   string // a name of Colors, or #rgb / #rrggbb
	// IsError marks a badge that stands for a failure (no such report);
	// shields' endpoint JSON carries it as isError.
	IsError bool
}

// Colors are shields.io's named colours.
var Colors = map[string]string{
	"brightgreen": "#4c1",
	"green":       "#97ca00",
	"yellowgreen": "#a4a61d",
	"yellow":      "#dfb317",
	"orange":      "#fe7d37",
	"red":         "#e05d44",
	"blue":        "#007ec6",
	"grey":        "#555",
	"lightgrey":   "#9f9f9f",
}

// hex is c as an SVG colour; anything but a known name or a hex colour
// is lightgrey, so no text from outside ever reaches an attribute.
func hex(c string) string {
	if v, ok := Colors[c]; ok {
		return v
	}
	if (len(c) == 4 || len(c) == 7) && c[0] == '#' {
		for _, r := range c[1:] {
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
				return Colors["lightgrey"]
			}
		}
		return c
	}
	return Colors["lightgrey"]
}

// SVG renders b in shields' "flat" style. Text is escaped; the result is
// well-formed XML.
func (b Badge) SVG() []byte {
	lw, mw := textWidth(b.Label)+10, textWidth(b.Message)+10
	w := lw + mw
	var buf bytes.Buffer
	n := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	ln := func(v float64) string { return strconv.FormatFloat(v*10, 'f', 0, 64) }
	title := b.Label + ": " + b.Message
	buf.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="` + n(w) + `" height="20" role="img" aria-label="`)
	esc(&buf, title)
	buf.WriteString(`"><title>`)
	esc(&buf, title)
	buf.WriteString(`</title><linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
	buf.WriteString(`<clipPath id="r"><rect width="` + n(w) + `" height="20" rx="3" fill="#fff"/></clipPath>`)
	buf.WriteString(`<g clip-path="url(#r)"><rect width="` + n(lw) + `" height="20" fill="#555"/><rect x="` + n(lw) + `" width="` + n(mw) + `" height="20" fill="` + hex(b.Color) + `"/><rect width="` + n(w) + `" height="20" fill="url(#s)"/></g>`)
	buf.WriteString(`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="110">`)
	text := func(s string, x, width float64) {
		for _, shadow := range []bool{true, false} {
			if shadow {
				buf.WriteString(`<text aria-hidden="true" x="` + ln(x) + `" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="` + ln(width-10) + `">`)
			} else {
				buf.WriteString(`<text x="` + ln(x) + `" y="140" transform="scale(.1)" fill="#fff" textLength="` + ln(width-10) + `">`)
			}
			esc(&buf, s)
			buf.WriteString(`</text>`)
		}
	}
	text(b.Label, lw/2, lw)
	text(b.Message, lw+mw/2, mw)
	buf.WriteString(`</g></svg>`)
	return buf.Bytes()
}

// esc writes s as XML character data (and attribute text); characters
// XML cannot hold become U+FFFD.
func esc(buf *bytes.Buffer, s string) {
	xml.EscapeText(buf, []byte(s))
}

// textWidth is s's width in pixels in Verdana 11px, rounded to a whole
// odd number as shields' badge-maker does (the text centres on a pixel).
func textWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		w += runeWidth(r)
	}
	n := int(w + 0.5)
	if n%2 == 0 {
		n++
	}
	return float64(n)
}
