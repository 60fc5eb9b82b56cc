package cli

import (
	"testing"

	"github.com/reportd/reportd/internal/report"
)

func TestLatestURL(t *testing.T) {
	main, empty := "feature/x", ""
	for _, c := range []struct {
		r    report.Report
		want string
	}{
		{report.Report{ProjectID: 3, Name: "coverage", DashboardURL: "https://r.example.com/team/#/reports/9"}, "https://r.example.com/team/p/3/latest/coverage"},
		{report.Report{ProjectID: 3, Name: "deck", FileType: report.PDF, DashboardURL: "http://h/#/reports/9"}, "http://h/p/acme-api/latest/deck?type=pdf"},
		{report.Report{ProjectID: 3, Name: "e2e", Branch: &main, DashboardURL: "http://h/#/reports/9"}, "http://h/p/3/latest/e2e?branch=feature%2Fx"},
		{report.Report{ProjectID: 3, Name: "pdf", Branch: &empty, DashboardURL: "http://h/#/reports/9"}, "http://h/p/3/latest?name=pdf"},
		{report.Report{ProjectID: 3, Name: "a/b", DashboardURL: "http://h/#/reports/9"}, "http://h/p/3/latest?name=a%2Fb"},
		{report.Report{ProjectID: 3, Name: "x y", DashboardURL: "http://h/#/reports/9"}, "http://h/p/3/latest/x%20y"},
		{report.Report{ProjectID: 3, Name: "x"}, ""},
	} {
		slug := ""
		if c.r.FileType != "" {
			slug = "acme-api"
		}
		if got := latestURL(&c.r, slug); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}
