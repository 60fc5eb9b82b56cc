package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// bucketProjectSlugs: slug -> project id (8 bytes). Each project's row
// holds its slug too; both change in the same transaction (create, PUT of
// a new slug, delete). Storage version 6 fills it (buildSlugs).
var bucketProjectSlugs = []byte("project_slugs")

// slugTaken reads who has slug in tx: its project id, or 0.
func slugOwner(tx *bolt.Tx, slug string) int64 {
	v := tx.Bucket(bucketProjectSlugs).Get([]byte(slug))
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// claimSlug gives project id the first free slug from base on (UniqueSlug).
func claimSlug(tx *bolt.Tx, id int64, base string) (string, error) {
	slug, err := report.UniqueSlug(base, func(s string) (bool, error) { return slugOwner(tx, s) != 0, nil })
	if err != nil {
		return "", err
	}
	return slug, tx.Bucket(bucketProjectSlugs).Put([]byte(slug), idKey(id))
}

// setSlug moves project id from slug old to slug new; new must be free.
func setSlug(tx *bolt.Tx, id int64, old, new string) error {
	if old == new {
		return nil
	}
	if owner := slugOwner(tx, new); owner != 0 && owner != id {
		return report.SlugTaken(new, owner)
	}
	bk := tx.Bucket(bucketProjectSlugs)
	if old != "" && slugOwner(tx, old) == id {
		if err := bk.Delete([]byte(old)); err != nil {
			return err
		}
	}
	return bk.Put([]byte(new), idKey(id))
}

// dropSlug removes project id's slug.
func dropSlug(tx *bolt.Tx, id int64, slug string) error {
	if slug == "" || slugOwner(tx, slug) != id {
		return nil
	}
	return tx.Bucket(bucketProjectSlugs).Delete([]byte(slug))
}

// ProjectBySlug is the project that has slug: one lookup in
// bucketProjectSlugs, then its row.
func (s *Store) ProjectBySlug(ctx context.Context, slug string) (report.Project, error) {
	var p report.Project
	err := s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketProjectSlugs)
		if bk == nil { // an old store opened read-only
			return report.Errorf(report.NotFound, "no project with slug %q (the store has no slugs yet: open it read-write once to upgrade it)", slug)
		}
		id := slugOwner(tx, slug)
		b := tx.Bucket(bucketProjects).Get(idKey(id))
		if id == 0 || b == nil {
			return report.Errorf(report.NotFound, "no project with slug %q", slug)
		}
		var err error
		p, _, err = s.decodeProject(id, b)
		p.TodayNewReports = todayCount(tx, id, s.dayString(s.clock.Today()))
		return err
	})
	return p, storageErr(err)
}

// buildSlugs gives every project a slug (the schema step to version 6):
// in id order, each the first free one from Slugify(name), so the oldest
// project of two named alike keeps the plain slug.
func buildSlugs(tx *bolt.Tx) error {
	bk := tx.Bucket(bucketProjects)
	type fix struct {
		key []byte
		row []byte
	}
	var fixes []fix
	err := bk.ForEach(func(k, v []byte) error {
		var row projectRow
		if err := unmarshalProjectRow(v, &row); err != nil {
			return err
		}
		id := int64(binary.BigEndian.Uint64(k))
		if row.Slug != "" && slugOwner(tx, row.Slug) == id {
			return nil
		}
		slug, err := claimSlug(tx, id, report.Slugify(row.Name))
		if err != nil {
			return err
		}
		row.Slug = slug
		b, err := json.Marshal(row)
		if err != nil {
			return err
		}
		fixes = append(fixes, fix{append([]byte(nil), k...), b})
		return nil
	})
	if err != nil {
		return err
	}
	// Rows are rewritten after the walk: a bucket must not change under
	// its own ForEach.
	for _, f := range fixes {
		if err := bk.Put(f.key, f.row); err != nil {
			return err
		}
	}
	return nil
}
