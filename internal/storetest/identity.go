package storetest

import (
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// latestNameType: a report's identity is name + type (+ branch). Two
// reports named "deck" (a pptx, then a pdf) are each the newest of their
// type; without a type the newest of any type answers; deletes and type
// changes move the name + type forms like the others.
func latestNameType(t *testing.T, s report.MetaStore, c report.Clock) {
	a, b := mustProject(t, s, c, "a"), mustProject(t, s, c, "b")
	add := func(p int64, name string, typ report.FileType, branch string) int64 {
		t.Helper()
		id, err := s.NextReportID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rec := record(id, p, c.NowLocal())
		rec.Name, rec.FileType, rec.FileName = name, typ, name+"."+string(typ)
		if branch != "" {
			rec.Branch = ptr(branch)
		}
		if _, err := s.CreateReport(ctx, rec); err != nil {
			t.Fatal(err)
		}
		return id
	}
	want := func(name string, typ *report.FileType, branch *string, p, id int64) {
		t.Helper()
		q := report.LatestQuery{Project: p, Name: &name, Type: typ, Branch: branch}
		got, err := s.Latest(ctx, q)
		switch {
		case id == 0 && !report.IsKind(err, report.NotFound):
			t.Fatalf("latest %s type %v: %d %v, want NotFound", describe(q), typ, got.ID, err)
		case id != 0 && (err != nil || got.ID != id):
			t.Fatalf("latest %s type %v: %d %v, want %d", describe(q), typ, got.ID, err, id)
		}
	}
	pptx, pdf, md, html := report.PPTX, report.PDF, report.MD, report.HTML
	deckPPTXMain := add(a.ID, "deck", pptx, "main")
	deckPDFMain := add(a.ID, "deck", pdf, "main")
	deckPDFDev := add(a.ID, "deck", pdf, "dev")
	deckMD := add(a.ID, "deck", md, "")
	deckx := add(a.ID, "deckx", pptx, "main") // "deck" is its prefix
	other := add(b.ID, "deck", pptx, "main")

	want("deck", nil, nil, a.ID, deckMD) // no type: the newest of any
	want("deck", &pptx, nil, a.ID, deckPPTXMain)
	want("deck", &pdf, nil, a.ID, deckPDFDev)
	want("deck", &md, nil, a.ID, deckMD)
	want("deck", &html, nil, a.ID, 0)
	want("deckx", &pptx, nil, a.ID, deckx)
	want("dec", &pptx, nil, a.ID, 0)
	want("deck", &pdf, ptr("main"), a.ID, deckPDFMain)
	want("deck", &pdf, ptr("dev"), a.ID, deckPDFDev)
	want("deck", &pptx, ptr("dev"), a.ID, 0)
	want("deck", &md, ptr(""), a.ID, deckMD)
	want("deck", &pdf, ptr(""), a.ID, 0)
	want("deck", &pptx, nil, b.ID, other)

	if _, err := s.DeleteReport(ctx, deckPDFDev); err != nil {
		t.Fatal(err)
	}
	want("deck", &pdf, nil, a.ID, deckPDFMain)
	want("deck", &pdf, ptr("dev"), a.ID, 0)
	// A new type moves the report between the name + type groups.
	if _, err := s.UpdateReport(ctx, deckMD, report.ReportChange{FileType: &html}); err != nil {
		t.Fatal(err)
	}
	want("deck", &md, nil, a.ID, 0)
	want("deck", &html, ptr(""), a.ID, deckMD)
	// So does a new name.
	if _, err := s.UpdateReport(ctx, deckPDFMain, report.ReportChange{Meta: report.BuildMeta{Name: ptr("slides")}}); err != nil {
		t.Fatal(err)
	}
	want("deck", &pdf, nil, a.ID, 0)
	want("slides", &pdf, ptr("main"), a.ID, deckPDFMain)
	if _, _, err := s.DeleteProject(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	want("deck", &pptx, nil, a.ID, 0)
	want("deck", &pptx, ptr("main"), b.ID, other)
}

// projectSlugs: a new project's slug is Slugify of its name, "-2", "-3"…
// when taken; renaming keeps it; a change to a free slug is stored and
// found by ProjectBySlug, one that is taken is a ValidationError; a
// deleted project's slug is free again.
func projectSlugs(t *testing.T, s report.MetaStore, c report.Clock) {
	acme := mustProject(t, s, c, "acme/api")
	acme2 := mustProject(t, s, c, "Acme API")
	acme3 := mustProject(t, s, c, "ACME--api!")
	digits := mustProject(t, s, c, "2024")
	empty := mustProject(t, s, c, "测试")
	for _, w := range []struct {
		p    report.Project
		slug string
	}{{acme, "acme-api"}, {acme2, "acme-api-2"}, {acme3, "acme-api-3"}, {digits, "project-2024"}, {empty, "project"}} {
		if w.p.Slug != w.slug {
			t.Fatalf("project %q: slug %q, want %q", w.p.Name, w.p.Slug, w.slug)
		}
		got, err := s.ProjectBySlug(ctx, w.slug)
		if err != nil || got.ID != w.p.ID || got.Slug != w.slug || got.Name != w.p.Name {
			t.Fatalf("by slug %q: %+v %v", w.slug, got, err)
		}
		one, err := s.Project(ctx, w.p.ID)
		if err != nil || one.Slug != w.slug {
			t.Fatalf("project %d reads back slug %q %v", w.p.ID, one.Slug, err)
		}
	}
	if _, err := s.ProjectBySlug(ctx, "nope"); !report.IsKind(err, report.NotFound) {
		t.Fatalf("unknown slug: %v", err)
	}
	// Renaming keeps the slug.
	p, _, err := s.UpdateProject(ctx, acme.ID, report.ProjectChange{Name: ptr("acme/web")})
	if err != nil || p.Slug != "acme-api" || p.Name != "acme/web" {
		t.Fatalf("renamed: %+v %v", p, err)
	}
	// A slug another project has is refused, and nothing changes.
	if _, _, err := s.UpdateProject(ctx, acme2.ID, report.ProjectChange{Name: ptr("x"), Slug: ptr("acme-api")}); !report.IsKind(err, report.Validation) {
		t.Fatalf("taken slug: %v", err)
	}
	if p, _ := s.Project(ctx, acme2.ID); p.Slug != "acme-api-2" || p.Name != "Acme API" {
		t.Fatalf("after a refused slug: %+v", p)
	}
	// A free one moves the project; its old slug is free.
	if p, _, err = s.UpdateProject(ctx, acme2.ID, report.ProjectChange{Slug: ptr("acme-ui")}); err != nil || p.Slug != "acme-ui" {
		t.Fatalf("new slug: %+v %v", p, err)
	}
	if got, err := s.ProjectBySlug(ctx, "acme-ui"); err != nil || got.ID != acme2.ID {
		t.Fatalf("by new slug: %+v %v", got, err)
	}
	if _, err := s.ProjectBySlug(ctx, "acme-api-2"); !report.IsKind(err, report.NotFound) {
		t.Fatalf("old slug still answers: %v", err)
	}
	// Setting its own slug again is no change.
	if p, _, err = s.UpdateProject(ctx, acme2.ID, report.ProjectChange{Slug: ptr("acme-ui")}); err != nil || p.Slug != "acme-ui" {
		t.Fatalf("same slug: %+v %v", p, err)
	}
	if again := mustProject(t, s, c, "Acme API"); again.Slug != "acme-api-2" {
		t.Fatalf("freed slug not reused: %q", again.Slug)
	}
	if _, _, err := s.DeleteProject(ctx, acme.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ProjectBySlug(ctx, "acme-api"); !report.IsKind(err, report.NotFound) {
		t.Fatalf("deleted project's slug: %v", err)
	}
	if reused := mustProject(t, s, c, "ACME api"); reused.Slug != "acme-api" {
		t.Fatalf("slug of a deleted project not reused: %q", reused.Slug)
	}
	ps, err := s.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if p.Slug == "" || seen[p.Slug] {
			t.Fatalf("list: project %d slug %q (empty or twice)", p.ID, p.Slug)
		}
		seen[p.Slug] = true
	}
}
