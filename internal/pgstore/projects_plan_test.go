package pgstore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

// The project list reads today's counts through project_days_day, not a
// scan of every day ever counted (a year of history for 200 projects).
func TestProjectsPlanUsesDayIndex(t *testing.T) {
	s := open(t, testserver.DSN(t), report.Clock{Location: time.UTC})
	defer s.Close()
	for _, q := range []string{
		`INSERT INTO projects (id, name, slug, created_at) SELECT g, 'p' || g, 'p' || g, now() FROM generate_series(1, 200) g`,
		`INSERT INTO project_days (project_id, day, count)
			SELECT p, current_date - d, 1 FROM generate_series(1, 200) p, generate_series(0, 364) d`,
		`ANALYZE projects, project_days`,
	} {
		if _, err := s.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.Pool().Query(ctx, "EXPLAIN "+pgstore.ProjectsSQL, time.Now().UTC().Format(time.DateOnly))
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, l)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "project_days_day") {
		t.Fatalf("the project list does not use project_days_day:\n%s", p)
	}
	ps, err := s.Projects(ctx)
	if err != nil || len(ps) != 200 || ps[0].TodayNewReports != 1 {
		t.Fatalf("projects: %d %v", len(ps), err)
	}
}
