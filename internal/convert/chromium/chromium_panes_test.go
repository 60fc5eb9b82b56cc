package chromium

import (
	"testing"

	"github.com/reportd/reportd/internal/sitegen"
	"github.com/reportd/reportd/internal/testfixture"
)

// A go tool cover -html report prints every file, each under its name, not
// only the one its <select> shows.
func TestGoCoverReportPrintsEveryFile(t *testing.T) {
	testfixture.NeedChromium(t)
	src := sitegen.GoCover(t).EntryPage(t)
	if !allPanes(src) {
		t.Fatal("the go cover report is not recognised")
	}
	text := testfixture.PDFText(t, printOK(t, sharedEngine(t), src))
	testfixture.WantText(t, text, "example.com/calc/add.go", "func Add", "example.com/calc/mul.go", "func Mul",
		"example.com/calc/strs/strs.go", "func Shout")
}
