package web_test

import (
	"strings"
	"testing"
)

// contrastJS lists visible text whose colour is below the WCAG AA ratio
// against the first solid background behind it: 4.5:1, or 3:1 for large
// text. Text over a gradient or an image (the cover tiles) is skipped, as
// are disabled controls.
const contrastJS = `(() => {
	const parse = (c) => { const m = c.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
	const lum = ({ r, g, b }) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
		.reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
	const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
	const out = [];
	for (const el of document.querySelectorAll('body *')) {
		const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
		if (!own || el.closest('[aria-hidden=true], .sr-only, option') || el.disabled) continue;
		const r = el.getBoundingClientRect();
		const cs = getComputedStyle(el);
		if (r.width === 0 || r.height === 0 || cs.visibility !== 'visible') continue;
		let bg = null, skip = false;
		for (let p = el; p; p = p.parentElement) {
			const ps = getComputedStyle(p);
			if (ps.backgroundImage !== 'none') { skip = true; break; }
			const c = parse(ps.backgroundColor);
			if (c.a === 1) { bg = c; break; }
		}
		if (skip) continue;
		bg = bg || { r: 255, g: 255, b: 255, a: 1 };
		const fg = parse(cs.color);
		const size = parseFloat(cs.fontSize), bold = +cs.fontWeight >= 700;
		const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
		const got = ratio(fg, bg);
		if (got < need) out.push(el.tagName.toLowerCase() + '.' + el.className + ' "' + el.textContent.trim().slice(0, 40) + '" ' + got.toFixed(2) + ':1');
	}
	return out;
})()`

// checkContrast fails the test for any text below the AA ratio on the
// current page.
func checkContrast(t *testing.T, b *browser, where string) {
	t.Helper()
	b.settle()
	if bad := eval[[]string](b, contrastJS); len(bad) > 0 {
		t.Errorf("low contrast on %s:\n%s", where, strings.Join(bad, "\n"))
	}
}
