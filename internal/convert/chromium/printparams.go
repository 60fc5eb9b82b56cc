package chromium

import "github.com/chromedp/cdproto/page"

// paperInches is the paper size when the document sets none with CSS @page.
func paperInches(paper string) (w, h float64) {
	if paper == "Letter" {
		return 8.5, 11
	}
	return 8.27, 11.69 // A4
}

func htmlPrintParams(paper string) page.PrintToPDFParams {
	w, h := paperInches(paper)
	return page.PrintToPDFParams{
		PrintBackground:   ptr(true),
		PreferCSSPageSize: ptr(true),
		PaperWidth:        w,
		PaperHeight:       h,
		// Chromium's own default margins (1 cm); @page margins in the document win.
		// Untagged, as Gotenberg's default: tagging walks the accessibility
		// tree and costs about a tenth of an HTML print here.
		GenerateTaggedPDF: ptr(false),
	}
}

func markdownPrintParams(paper string) page.PrintToPDFParams {
	w, h := paperInches(paper)
	const mm = 1 / 25.4
	return page.PrintToPDFParams{
		PrintBackground:         ptr(true),
		PaperWidth:              w,
		PaperHeight:             h,
		MarginTop:               ptr(20 * mm),
		MarginBottom:            ptr(22 * mm),
		MarginLeft:              ptr(20 * mm),
		MarginRight:             ptr(20 * mm),
		GenerateDocumentOutline: ptr(true),
	}
}

func ptr[T any](v T) *T { return &v }
