package apitest

import "github.com/reportd/reportd/internal/testfixture"

// The fixtures live in internal/testfixture (which internal/daemon's tests
// can import too); these names keep the callers of apitest as they were.

// MinimalPDF is a small valid one-page PDF with the text "Hello PDF".
func MinimalPDF() []byte { return testfixture.MinimalPDF() }

// FakePPTX is a zip that has the parts a PPTX names (not a renderable deck).
func FakePPTX() []byte { return testfixture.FakePPTX() }

// PNG is a valid 1×1 PNG.
func PNG() []byte { return testfixture.PNG() }

// OLE2 is the start of a compound file (what .ppt files are).
func OLE2() []byte { return testfixture.OLE2() }
