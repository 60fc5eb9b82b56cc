package report

import (
	"net/url"
	"testing"
)

func TestParsePrintOptionsNormalizes(t *testing.T) {
	same := [][2]string{
		{"paper=a4", "paper=A4"},
		{"pageRanges=5,1-3", "pageRanges=1,2,3,5"},
		{"margin=1in", "margin=25.4mm 25.4mm"},
		{"margin=10mm,5mm", "margin=10mm 5mm 10mm 5mm"},
		{"scale=1", ""},
		{"printBackground=true", ""},
		{"landscape=false", ""},
		{"landscape=1", "landscape=true"},
		{"scope=entry", ""},
		{"scope=SITE", "scope=site"},
	}
	for _, c := range same {
		a, errA := ParsePrintOptions(query(t, c[0]))
		b, errB := ParsePrintOptions(query(t, c[1]))
		if errA != nil || errB != nil {
			t.Fatalf("%v: %v %v", c, errA, errB)
		}
		if a.Key() != b.Key() {
			t.Errorf("%q and %q: keys %q and %q differ", c[0], c[1], a.Key(), b.Key())
		}
	}
	o, err := ParsePrintOptions(query(t, "pageRanges=7,2-3,3-4"))
	if err != nil || o.PageRanges != "2-4,7" || o.LastPage() != 7 {
		t.Fatalf("got %+v %v", o, err)
	}
	if o, _ := ParsePrintOptions(url.Values{"other": {"x"}}); !o.IsZero() || o.Key() != "" {
		t.Fatalf("no print parameters: %+v", o)
	}
}

func TestParsePrintOptionsRefusesBadValues(t *testing.T) {
	for _, q := range []string{
		"paper=B5", "paper=", "landscape=maybe", "margin=10", "margin=-1mm", "margin=1furlong",
		"margin=1mm 1mm 1mm 1mm 1mm", "margin=6in", "pageRanges=0", "pageRanges=3-1", "pageRanges=a",
		"pageRanges=1-", "pageRanges=", "pageRanges=1,,2", "scale=0.05", "scale=3", "scale=NaN",
		"printBackground=2", "waitForSelector=", "waitForExpression=", "paper=A4&paper=A3",
		"scope=", "scope=all", "scope=site&scope=entry",
	} {
		if _, err := ParsePrintOptions(query(t, q)); KindOf(err) != Validation {
			t.Errorf("%s: got %v, want a ValidationError", q, err)
		}
	}
}

func TestPrintOptionsCheckFor(t *testing.T) {
	wait := PrintOptions{WaitForSelector: "#x"}
	if wait.CheckFor(HTML) != nil || KindOf(wait.CheckFor(MD)) != Validation {
		t.Fatal("waits apply to HTML only")
	}
	pages := PrintOptions{PageRanges: "2"}
	if pages.CheckFor(PDF) != nil || KindOf(pages.CheckFor(PPTX)) != Validation {
		t.Fatal("a pdf takes pageRanges, a pptx not")
	}
	if both := (PrintOptions{PageRanges: "2", Scale: 2}); KindOf(both.CheckFor(PDF)) != Validation {
		t.Fatal("a pdf takes only pageRanges")
	}
	land := PrintOptions{Landscape: true}
	for _, ft := range []FileType{PDF, PPT, PPTX} {
		if KindOf(land.CheckFor(ft)) != Validation || (PrintOptions{}).CheckFor(ft) != nil {
			t.Fatalf("%s: options must be refused, none accepted", ft)
		}
	}
}

func query(t *testing.T, s string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// scope=site applies to HTML alone, and not with pageRanges.
func TestPrintOptionsScope(t *testing.T) {
	site := PrintOptions{Scope: ScopeSite}
	if site.IsZero() || site.Key() != "scope=site" || site.CheckFor(HTML) != nil {
		t.Fatalf("scope=site: zero %v, key %q, HTML %v", site.IsZero(), site.Key(), site.CheckFor(HTML))
	}
	for _, ft := range []FileType{MD, PDF, PPT, PPTX} {
		if KindOf(site.CheckFor(ft)) != Validation {
			t.Errorf("scope=site on %s was not refused", ft)
		}
	}
	if both := (PrintOptions{Scope: ScopeSite, PageRanges: "1"}); KindOf(both.CheckFor(HTML)) != Validation {
		t.Error("scope=site with pageRanges was not refused")
	}
}
