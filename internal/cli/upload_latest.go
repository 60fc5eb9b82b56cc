package cli

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// latestActions are the words /p/{project}/latest/ reserves (docs/links.md).
var latestActions = map[string]bool{"pdf": true, "download": true, "preview": true, "site": true, "badge.svg": true, "badge.json": true}

// latestURL is the stable link to the newest report like r (same project,
// name, type and branch: a report's identity), on the same base as its
// dashboardUrl; "" when the server sent no dashboardUrl. The project is
// named by slug, which survives a rename (by id when slug is "": an older
// server).
func latestURL(r *report.Report, slug string) string {
	base, _, ok := strings.Cut(r.DashboardURL, "/#/reports/")
	if !ok || base == "" {
		return ""
	}
	project := slug
	if project == "" {
		project = strconv.FormatInt(r.ProjectID, 10)
	}
	u := base + "/p/" + project + "/latest"
	q := url.Values{}
	if latestActions[r.Name] || strings.Contains(r.Name, "/") {
		q.Set("name", r.Name)
	} else {
		u += "/" + url.PathEscape(r.Name)
	}
	if r.FileType != "" {
		q.Set("type", string(r.FileType))
	}
	if r.Branch != nil && *r.Branch != "" {
		q.Set("branch", *r.Branch)
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}
