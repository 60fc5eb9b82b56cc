package convert

import (
	"testing"

	"github.com/reportd/reportd/internal/convert/chromium"
	"github.com/reportd/reportd/internal/convert/markdown"
	"github.com/reportd/reportd/internal/report"
)

// Everything embedded in a print is part of the cache key: a change to the
// scripts every page runs, the pane printer or the Markdown stylesheet
// invalidates cached PDFs (and the ETags built on Generation) without
// anyone remembering to bump renderVersion.
func TestVariantFollowsEmbeddedInputs(t *testing.T) {
	cfg := DefaultConfig()
	base := variantOf(&cfg)
	if base != variantOf(&cfg) {
		t.Fatal("variant is not stable")
	}
	scripts, readySelectors := chromium.VariantInputs()
	scripts["markdown.css"] = &markdown.CSS
	for name, v := range scripts {
		old := *v
		*v = old + "\n/* changed */"
		got := variantOf(&cfg)
		*v = old
		if got == base {
			t.Errorf("changing %s left the variant at %s", name, base)
		}
	}
	old := readySelectors["coverage.py"]
	readySelectors["coverage.py"] = old + ", #changed"
	got := variantOf(&cfg)
	readySelectors["coverage.py"] = old
	if got == base {
		t.Error("changing a site ready selector left the variant as it was")
	}
	other := cfg
	other.AllowNetwork = !cfg.AllowNetwork
	if variantOf(&other) == base {
		t.Error("allow_network does not change the variant")
	}
	m := newManager(t, nil)
	if m.Generation() != variantOf(&m.cfg) || m.printVariant(report.PrintOptions{}) != m.Generation() {
		t.Errorf("Generation %q, variant %q", m.Generation(), m.variant)
	}
}
