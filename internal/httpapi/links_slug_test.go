package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/report"
)

// A project named after the repository ("acme/api", as CI examples name
// them) is reached in stable links by its slug and by its escaped name;
// renaming it keeps the slug's links working; PUT may set a new slug.
func TestLinksBySlugAndEscapedName(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("acme/api")
	if p.Slug != "acme-api" {
		t.Fatalf("slug of acme/api: %q", p.Slug)
	}
	twin := e.CreateProject("Acme API")
	if twin.Slug != "acme-api-2" {
		t.Fatalf("slug of a second acme-api: %q", twin.Slug)
	}
	rep := uploadHTML(t, e, p.ID, "coverage.html", testdata(t, "coveragepy-6.5.0-index.html"))
	dash := fmt.Sprintf("%s/#/reports/%d", e.URL, rep.ID)
	for _, path := range []string{"/p/acme-api/latest", "/p/acme%2Fapi/latest", "/p/acme%2fapi/latest/coverage",
		fmt.Sprintf("/p/%d/latest", p.ID), "/p/acme-api/latest/coverage?type=html"} {
		r := noFollow(t, e, path)
		if r.StatusCode != http.StatusFound || r.Header.Get("Location") != dash {
			t.Errorf("%s: %d %q, want 302 to %s (%s)", path, r.StatusCode, r.Header.Get("Location"), dash, r.Body)
		}
	}
	if r := e.Get("/p/acme%2Fapi/coverage/badge.svg"); r.StatusCode != 200 || !strings.Contains(string(r.Body), "80%") {
		t.Errorf("badge by escaped name: %d", r.StatusCode)
	}
	// The twin has no report: a 404 with its slug, not the other's report.
	wantLinkError(t, noFollow(t, e, "/p/acme-api-2/latest"), report.NotFound)

	// Renaming keeps the slug and its links.
	body, ct := apitest.Multipart(apitest.Part{Name: "name", Data: []byte("acme/web")})
	r := e.Do("PUT", fmt.Sprintf("/api/projects/%d", p.ID), body, ct)
	var got report.Project
	if r.JSON(t, &got); r.StatusCode != 200 || got.Slug != "acme-api" || got.Name != "acme/web" {
		t.Fatalf("rename: %d %s", r.StatusCode, r.Body)
	}
	if r := noFollow(t, e, "/p/acme-api/latest"); r.StatusCode != http.StatusFound {
		t.Errorf("slug link after a rename: %d %s", r.StatusCode, r.Body)
	}
	// A new slug: free is taken, a taken one or a malformed one is refused.
	for slug, ok := range map[string]bool{"acme-api-2": false, "Acme": false, "12": false, "acme-web": true} {
		body, ct := apitest.Multipart(apitest.Part{Name: "slug", Data: []byte(slug)})
		r := e.Do("PUT", fmt.Sprintf("/api/projects/%d", p.ID), body, ct)
		if !ok {
			wantError(t, r, report.Validation)
			continue
		}
		if r.JSON(t, &got); r.StatusCode != 200 || got.Slug != slug {
			t.Fatalf("new slug %s: %d %s", slug, r.StatusCode, r.Body)
		}
	}
	if r := noFollow(t, e, "/p/acme-web/latest"); r.StatusCode != http.StatusFound {
		t.Errorf("new slug link: %d %s", r.StatusCode, r.Body)
	}
	wantLinkError(t, noFollow(t, e, "/p/acme-api/latest"), report.NotFound)
}

// In spec mode (every API error a 500) an error says which setting gives
// conventional statuses; stable links answer them anyway and need no
// such advice.
func TestSpecModeErrorsNameTheSetting(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	r := e.Get("/api/reports/999")
	wantError(t, r, report.NotFound)
	if !strings.Contains(string(r.Body), "error_status: conventional answers 404") {
		t.Errorf("spec-mode error without the setting: %s", r.Body)
	}
	wantLinkError(t, noFollow(t, e, "/p/999/latest"), report.NotFound)
	wantLinkError(t, noFollow(t, e, "/p/999/badge.svg"), report.NotFound)
}
