package badge

import (
	"bytes"
	"encoding/xml"
	"strconv"
)

// Trend sizes: a sparkline as tall as a badge.
const (
	TrendWidth  = 120
	TrendHeight = 20
	trendPad    = 2
)

// Trend is a sparkline of one figure across builds, oldest first, for a
// README beside the badges. Title names what it shows (the <title> a
// screen reader reads); Desc says the figures in words.
type Trend struct {
	Title  string
	Desc   string
	Values []float64
	Color  string // a name of Colors or a hex colour; "" blue
}

// SVG draws the sparkline: a polyline through the values scaled to the
// box (min at the bottom, max at the top; a flat line in the middle when
// they are all equal), a dot on the newest value, and a grey dashed line
// when there are no values. role="img" with <title> and <desc> make it
// read as one image; every text is XML-escaped.
func (t Trend) SVG() []byte {
	var b bytes.Buffer
	w, h := strconv.Itoa(TrendWidth), strconv.Itoa(TrendHeight)
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="` + w + `" height="` + h + `" viewBox="0 0 ` + w + ` ` + h +
		`" role="img" aria-labelledby="t d"><title id="t">`)
	xml.EscapeText(&b, []byte(t.Title))
	b.WriteString(`</title><desc id="d">`)
	xml.EscapeText(&b, []byte(t.Desc))
	b.WriteString(`</desc>`)
	b.WriteString(`<rect width="` + w + `" height="` + h + `" rx="3" fill="#f6f8fa"/>`)
	if len(t.Values) == 0 {
		mid := strconv.Itoa(TrendHeight / 2)
		b.WriteString(`<line x1="` + strconv.Itoa(trendPad) + `" y1="` + mid + `" x2="` + strconv.Itoa(TrendWidth-trendPad) + `" y2="` + mid +
			`" stroke="` + Colors["lightgrey"] + `" stroke-width="1.5" stroke-dasharray="3 3"/></svg>`)
		return b.Bytes()
	}
	color := Colors["blue"]
	if t.Color != "" {
		color = hex(t.Color)
	}
	xs, ys := t.points()
	b.WriteString(`<polyline fill="none" stroke="` + color + `" stroke-width="1.5" stroke-linejoin="round" points="`)
	for i := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(num(xs[i]) + "," + num(ys[i]))
	}
	b.WriteString(`"/>`)
	last := len(xs) - 1
	b.WriteString(`<circle cx="` + num(xs[last]) + `" cy="` + num(ys[last]) + `" r="2" fill="` + color + `"/></svg>`)
	return b.Bytes()
}

// points are the values' coordinates in the box.
func (t Trend) points() (xs, ys []float64) {
	lo, hi := t.Values[0], t.Values[0]
	for _, v := range t.Values {
		lo, hi = min(lo, v), max(hi, v)
	}
	innerW, innerH := float64(TrendWidth-2*trendPad), float64(TrendHeight-2*trendPad)
	for i, v := range t.Values {
		x := float64(TrendWidth) / 2
		if len(t.Values) > 1 {
			x = trendPad + innerW*float64(i)/float64(len(t.Values)-1)
		}
		y := float64(TrendHeight) / 2
		if hi > lo {
			y = trendPad + innerH*(hi-v)/(hi-lo)
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	return xs, ys
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
