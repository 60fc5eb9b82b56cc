package badge

// asciiWidths are the advance widths in pixels of Verdana at 11px for
// ' ' (0x20) through '~' (0x7e): the font's advance widths (units per em
// 2048) times 11/2048, as shields.io measures badge text.
var asciiWidths = [95]float64{
	3.87, 4.33, 5.05, 9.00, 6.99, 11.84, 7.99, 2.95, 4.99, 4.99, 6.99, 9.00, 4.00, 4.99, 4.00, 4.99, // ' ' – '/'
	6.99, 6.99, 6.99, 6.99, 6.99, 6.99, 6.99, 6.99, 6.99, 6.99, // '0' – '9'
	4.99, 4.99, 9.00, 9.00, 9.00, 5.99, 11.00, // ':' – '@'
	7.52, 7.54, 7.68, 8.48, 6.96, 6.32, 8.53, 8.27, 4.63, 5.00, 7.62, 6.12, 9.27, // 'A' – 'M'
	8.23, 8.66, 6.63, 8.66, 7.65, 7.52, 6.78, 8.05, 7.52, 10.88, 7.54, 6.77, 7.54, // 'N' – 'Z'
	4.99, 4.99, 4.99, 9.00, 6.99, 6.99, // '[' – '`'
	6.61, 6.85, 5.73, 6.85, 6.55, 3.87, 6.85, 6.96, 3.02, 3.79, 6.51, 3.02, 10.66, // 'a' – 'm'
	6.96, 6.68, 6.85, 6.85, 4.69, 5.73, 4.33, 6.96, 6.51, 8.98, 6.51, 6.51, 5.78, // 'n' – 'z'
	6.98, 4.99, 6.98, 9.00, // '{' – '~'
}

// runeWidth estimates one character's width: the table for ASCII, a full
// em for East Asian wide characters, and the width of a lower-case letter
// for the rest.
func runeWidth(r rune) float64 {
	switch {
	case r >= 0x20 && r <= 0x7e:
		return asciiWidths[r-0x20]
	case r < 0x20 || r == 0x7f:
		return 0
	case wide(r):
		return 11
	}
	return 7
}

func wide(r rune) bool {
	return (r >= 0x1100 && r <= 0x115f) || (r >= 0x2e80 && r <= 0xa4cf) || (r >= 0xac00 && r <= 0xd7a3) ||
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xfe30 && r <= 0xfe4f) || (r >= 0xff00 && r <= 0xff60) ||
		(r >= 0xffe0 && r <= 0xffe6) || (r >= 0x1f300 && r <= 0x1faff) || (r >= 0x20000 && r <= 0x3fffd)
}
