package storetest

import (
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// sitesRoundTrip: a site report's kind, entry, files and bytes are stored
// with the row and read back by every read (detail, list, update, latest,
// delete); a single file reads back as kind "file" without them; FilePaths
// names a site's manifest, the object its row owns.
func sitesRoundTrip(t *testing.T, s report.MetaStore, c report.Clock) {
	a := mustProject(t, s, c, "a")
	plain := mustReport(t, s, c, a.ID, c.NowLocal())
	if plain.Kind != report.KindFile || plain.Entry != "" || plain.Files != 0 || plain.Bytes != 0 {
		t.Fatalf("a single file reads back as kind %q entry %q files %d bytes %d", plain.Kind, plain.Entry, plain.Files, plain.Bytes)
	}
	id, err := s.NextReportID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := record(id, a.ID, c.NowLocal())
	rec.FileName, rec.FileType, rec.FilePath = "htmlcov.zip", report.HTML, report.SiteFilePath(id, "sub dir/index é.html")
	rec.Kind, rec.Entry, rec.Files, rec.Bytes = report.KindSite, "sub dir/index é.html", 1234, 5_000_000_000
	rec.Size, rec.SHA256 = 0, ""
	created, err := s.CreateReport(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, r report.ReportRecord) {
		t.Helper()
		if r.ID != id || r.Kind != report.KindSite || r.Entry != rec.Entry || r.Files != 1234 || r.Bytes != 5_000_000_000 ||
			r.FilePath != rec.FilePath || r.FileType != report.HTML {
			t.Fatalf("%s: site read back as %+v", what, r.Report)
		}
	}
	check("create", created)
	got, err := s.Report(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	check("detail", got)
	list, err := s.Reports(ctx, &a.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %d %v", len(list), err)
	}
	check("list", list[1])
	if list[0].Kind != report.KindFile {
		t.Fatalf("list: the file reads back as kind %q", list[0].Kind)
	}
	up, err := s.UpdateReport(ctx, id, report.ReportChange{FileName: ptr("renamed.zip"), Meta: report.BuildMeta{Branch: ptr("main")}})
	if err != nil {
		t.Fatal(err)
	}
	if up.FileName != "renamed.zip" {
		t.Fatalf("update: %+v", up.Report)
	}
	check("update", up)
	l, err := s.Latest(ctx, report.LatestQuery{Project: a.ID, Branch: ptr("main")})
	if err != nil {
		t.Fatal(err)
	}
	check("latest", l)
	paths := map[string]bool{}
	if err := s.FilePaths(ctx, func(p string) error { paths[p] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if !paths[report.SiteManifestPath(id)] || paths[rec.FilePath] || !paths[plain.FilePath] {
		t.Fatalf("FilePaths %v: want the site's manifest %s (not its filePath) and the file %s", paths, report.SiteManifestPath(id), plain.FilePath)
	}
	del, err := s.DeleteReport(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	check("delete", del)
	if del.StoredPath() != report.SiteManifestPath(id) {
		t.Fatalf("stored path of a site: %s", del.StoredPath())
	}
}
