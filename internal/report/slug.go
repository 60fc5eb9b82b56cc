package report

import (
	"strconv"
	"strings"
)

// MaxSlugLen is the longest project slug, in bytes (slugs are ASCII).
const MaxSlugLen = 100

// Slugify is the slug a new project named name starts from: A-Z lowered,
// each run of characters outside a-z and 0-9 turned into one '-', none at
// either end, at most 88 characters ("acme/api" is "acme-api", "Team A · Nightly" "team-a-nightly").
// A name that leaves nothing is "project"; one that leaves only digits
// gets a "project-" in front, since a number in a link is an id. The
// stores add "-2", "-3"… when the slug is taken (UniqueSlug).
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	// Cut so that "project-" and a "-N" still fit in MaxSlugLen. The
	// PostgreSQL store's schema step (0010_project_slug.sql) computes the
	// same in SQL: keep the two in step.
	s := strings.TrimRight(b.String()[:min(b.Len(), slugCut)], "-")
	switch {
	case s == "":
		return "project"
	case allDigits(s):
		return "project-" + s
	}
	return s
}

const slugCut = MaxSlugLen - len("project-") - len("-999")

// CheckSlug validates a slug a client asks for (PUT /projects/{id}): the
// shape Slugify gives, so every slug is a path segment as it is.
func CheckSlug(s string) error {
	bad := func(why string) error {
		return Errorf(Validation, "slug %q %s: use lower-case a-z, 0-9 and single '-' between them, such as acme-api", s, why)
	}
	switch {
	case s == "":
		return bad("is empty")
	case len(s) > MaxSlugLen:
		return Errorf(Validation, "slug is longer than %d characters", MaxSlugLen)
	case allDigits(s):
		return bad("is all digits, which a link reads as a project id")
	case s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--"):
		return bad("starts or ends with '-' or has two in a row")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return bad("has characters other than a-z, 0-9 and '-'")
		}
	}
	return nil
}

// UniqueSlug is the first of base, base-2, base-3… that taken says is
// free: how every store settles a new project's slug, in the transaction
// that creates it.
func UniqueSlug(base string, taken func(string) (bool, error)) (string, error) {
	for n := 1; ; n++ {
		s := base
		if n > 1 {
			s = base + "-" + strconv.Itoa(n)
		}
		used, err := taken(s)
		if err != nil || !used {
			return s, err
		}
	}
}

// SlugTaken is the error of a slug another project has.
func SlugTaken(slug string, project int64) error {
	return Errorf(Validation, "slug %q is taken by project %d", slug, project)
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
