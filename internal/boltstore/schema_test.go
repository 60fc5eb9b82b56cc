package boltstore

import (
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// A store written by a newer reportd is refused rather than misread.
func TestNewerStorageVersionRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reportd.db")
	s, err := Open(path, report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	s.DB().Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyStorageVersion, u64(storageVersion+1))
	})
	s.Close()
	if _, err := Open(path, report.Clock{}); err == nil || !strings.Contains(err.Error(), "storage version") {
		t.Fatalf("open newer store: %v", err)
	}
}

func TestSchemaCreatesEveryBucket(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "reportd.db"), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.DB().View(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if tx.Bucket(b) == nil {
				t.Errorf("bucket %s missing", b)
			}
		}
		return nil
	})
}

// A version 1 store (no latest index) is upgraded on open: the index is
// built from the rows.
func TestVersion1GetsTheLatestIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reportd.db")
	s, err := Open(path, report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s.CreateProject(ctx, report.Project{ID: 1, Name: "p"})
	for id := int64(1); id <= 3; id++ {
		if _, err := s.CreateReport(ctx, report.ReportRecord{Report: report.Report{ID: id, ProjectID: 1, FileName: "Coverage.html", FileType: report.HTML,
			FilePath: "/uploads/reports/x.html"}}); err != nil {
			t.Fatal(err)
		}
	}
	s = reopenAs(t, s, path, 1, bucketLatest)
	defer s.Close()
	if r, err := s.Latest(ctx, exact(1, "coverage", "")); err != nil || r.ID != 3 {
		t.Fatalf("latest after the upgrade: %d %v, want 3", r.ID, err)
	}
	if d, err := s.CounterDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("drift after the upgrade: %v %v", d, err)
	}
}

// A version 3 store (no by-name or by-branch index) is upgraded on open:
// both are built from the rows, and check finds nothing to repair.
func TestVersion3GetsTheLatestByIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reportd.db")
	s, err := Open(path, report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s.CreateProject(ctx, report.Project{ID: 1, Name: "p"})
	for id, branch := range map[int64]string{1: "main", 2: "dev", 3: "main"} {
		if _, err := s.CreateReport(ctx, report.ReportRecord{Report: report.Report{ID: id, ProjectID: 1, FileName: "Coverage.html", FileType: report.HTML,
			FilePath: "/uploads/reports/x.html", Branch: &branch}}); err != nil {
			t.Fatal(err)
		}
	}
	s = reopenAs(t, s, path, 3, bucketLatestName, bucketLatestBranch)
	defer s.Close()
	name, dev := "coverage", "dev"
	if r, err := s.Latest(ctx, report.LatestQuery{Project: 1, Name: &name}); err != nil || r.ID != 3 {
		t.Fatalf("latest by name after the upgrade: %d %v, want 3", r.ID, err)
	}
	if r, err := s.Latest(ctx, report.LatestQuery{Project: 1, Branch: &dev}); err != nil || r.ID != 2 {
		t.Fatalf("latest by branch after the upgrade: %d %v, want 2", r.ID, err)
	}
	if d, err := s.CounterDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("drift after the upgrade: %v %v", d, err)
	}
}

// reopenAs turns s into a store of an older storage version (without the
// buckets that version lacked), closes it and opens it again, as a newer
// reportd would find it.
func reopenAs(t *testing.T, s *Store, path string, version uint64, missing ...[]byte) *Store {
	t.Helper()
	err := s.DB().Update(func(tx *bolt.Tx) error {
		for _, b := range missing {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keyStorageVersion, u64(version))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(path, report.Clock{}); err != nil {
		t.Fatal(err)
	}
	return s
}

// A version 5 store (projects without slugs, no name + type indexes) is
// upgraded on open: every project gets the slug a new one would, in id
// order (the oldest keeps the plain one), the name + type indexes are
// built from the rows, and check finds nothing to repair.
func TestVersion5GetsSlugsAndNameTypeIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reportd.db")
	s, err := Open(path, report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	names := map[int64]string{1: "acme/api", 2: "Acme API", 3: "2024", 4: "acme-api"}
	for id := int64(1); id <= 4; id++ {
		if _, err := s.CreateProject(ctx, report.Project{ID: id, Name: names[id]}); err != nil {
			t.Fatal(err)
		}
	}
	for id, file := range map[int64]string{1: "deck.pptx", 2: "deck.pdf", 3: "deck.pptx"} {
		typ := report.FileType(strings.TrimPrefix(filepath.Ext(file), "."))
		if _, err := s.CreateReport(ctx, report.ReportRecord{Report: report.Report{ID: id, ProjectID: 1, FileName: file, FileType: typ,
			FilePath: "/uploads/reports/x." + string(typ), Name: "deck"}}); err != nil {
			t.Fatal(err)
		}
	}
	// As version 5 wrote them: project rows without a slug.
	err = s.DB().Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketProjects)
		for id := int64(1); id <= 4; id++ {
			if _, err := updateProjectRow(tx, id, func(r *projectRow) { r.Slug = "" }); err != nil {
				return err
			}
			if strings.Contains(string(bk.Get(idKey(id))), `"s"`) {
				t.Fatalf("row %d still has a slug: %s", id, bk.Get(idKey(id)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s = reopenAs(t, s, path, 5, bucketProjectSlugs, bucketLatestNameType, bucketLatestNameTypeBranch)
	defer s.Close()
	for id, want := range map[int64]string{1: "acme-api", 2: "acme-api-2", 3: "project-2024", 4: "acme-api-3"} {
		p, err := s.ProjectBySlug(ctx, want)
		if err != nil || p.ID != id || p.Slug != want {
			t.Fatalf("slug %s after the upgrade: %+v %v, want project %d", want, p, err, id)
		}
	}
	name, pptx, pdf := "deck", report.PPTX, report.PDF
	for typ, want := range map[*report.FileType]int64{&pptx: 3, &pdf: 2, nil: 3} {
		if r, err := s.Latest(ctx, report.LatestQuery{Project: 1, Name: &name, Type: typ}); err != nil || r.ID != want {
			t.Fatalf("latest deck of type %v after the upgrade: %d %v, want %d", typ, r.ID, err, want)
		}
	}
	if d, err := s.CounterDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("drift after the upgrade: %v %v", d, err)
	}
	// A new project after the upgrade takes the next free slug.
	if p, err := s.CreateProject(ctx, report.Project{ID: 5, Name: "ACME API"}); err != nil || p.Slug != "acme-api-4" {
		t.Fatalf("new project after the upgrade: %+v %v", p, err)
	}
}

// A version 5 store (before the secrets bucket) is upgraded on open to
// the current version, and the content signing key can be made.
func TestVersion5GetsTheSecretsBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reportd.db")
	s, err := Open(path, report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	s = reopenAs(t, s, path, 5, bucketSecrets)
	defer s.Close()
	s.DB().View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketSecrets) == nil {
			t.Error("no secrets bucket after the upgrade")
		}
		if v := tx.Bucket(bucketMeta).Get(keyStorageVersion); string(v) != string(u64(storageVersion)) || storageVersion < 7 {
			t.Errorf("storage version %x, want %d", v, storageVersion)
		}
		return nil
	})
	if k, _, err := s.ContentKey(t.Context()); err != nil || len(k) != 64 {
		t.Errorf("content key after the upgrade: %q %v", k, err)
	}
}
