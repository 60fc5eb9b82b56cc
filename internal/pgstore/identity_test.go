package pgstore_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

// A database at schema version 8 (before slugs and the name + type
// indexes) is brought up to date by Open: migration 10 gives every
// project, in id order, the slug report.Slugify and report.UniqueSlug
// give a new project (the SQL and the Go must agree), and the name + type
// forms of Latest find the old rows.
func TestUpgradeFromVersion8(t *testing.T) {
	dsn := testserver.DSN(t)
	steps, err := pgstore.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, m := range steps {
		if m.Version > 8 {
			break
		}
		if _, err := conn.Exec(ctx, m.SQL); err != nil {
			t.Fatalf("migration %d: %v", m.Version, err)
		}
		if _, err := conn.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	// Names that test each rule: runs of other characters, case, digits
	// only, nothing left, leading and trailing junk, a taken slug, length.
	names := []string{"acme/api", "Acme API", "--ACME__api--", "2024", "测试", "", "Ünïcode Team", "acme-api-2",
		strings.Repeat("Long Name ", 20), "x/" + strings.Repeat("9", 95), "acme api"}
	for i, n := range names {
		if _, err := conn.Exec(ctx, "INSERT INTO projects (id, name, created_at) VALUES ($1, $2, now())", i+1, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, "SELECT setval('project_ids', $1)", len(names)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO reports (id, project_id, file_name, file_type, file_path, upload_time, size, sha256, name, branch) VALUES
			(1, 1, 'deck.pptx', 'pptx', '/uploads/reports/1.pptx', now(), 10, 'ab', 'deck', 'main'),
			(2, 1, 'deck.pdf', 'pdf', '/uploads/reports/2.pdf', now(), 10, 'ab', 'deck', 'main'),
			(3, 1, 'deck.pptx', 'pptx', '/uploads/reports/3.pptx', now(), 10, 'ab', 'deck', '');
		SELECT setval('report_ids', 3)`); err != nil {
		t.Fatal(err)
	}
	s := open(t, dsn, report.Clock{})
	defer s.Close()
	wantAllApplied(t, dsn)
	taken := map[string]bool{}
	for i, n := range names {
		want, _ := report.UniqueSlug(report.Slugify(n), func(s string) (bool, error) { return taken[s], nil })
		taken[want] = true
		p, err := s.Project(ctx, int64(i+1))
		if err != nil || p.Slug != want {
			t.Errorf("project %d %q: slug %q %v, want %q (as a new project gets it)", i+1, n, p.Slug, err, want)
		}
	}
	name, pptx, pdf, main := "deck", report.PPTX, report.PDF, "main"
	for _, c := range []struct {
		typ    *report.FileType
		branch *string
		want   int64
	}{{&pptx, nil, 3}, {&pdf, nil, 2}, {nil, nil, 3}, {&pptx, &main, 1}, {&pdf, &main, 2}} {
		if r, err := s.Latest(ctx, report.LatestQuery{Project: 1, Name: &name, Type: c.typ, Branch: c.branch}); err != nil || r.ID != c.want {
			t.Fatalf("latest deck of type %v on %v: %d %v, want %d", c.typ, c.branch, r.ID, err, c.want)
		}
	}
	// A project created after the upgrade takes the next free slug.
	id, _ := s.NextProjectID(ctx)
	// acme-api to -4 are taken ("acme-api-2" the name gave "acme-api-2-2").
	if p, err := s.CreateProject(ctx, report.Project{ID: id, Name: "ACME API"}); err != nil || p.Slug != "acme-api-5" {
		t.Fatalf("new project after the upgrade: %+v %v", p, err)
	}
}
