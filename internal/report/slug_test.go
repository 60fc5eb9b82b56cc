package report

import (
	"strings"
	"testing"
)

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"acme/api":                "acme-api",
		"Acme API":                "acme-api",
		"--ACME__api--":           "acme-api",
		"Team A · Nightly":        "team-a-nightly",
		"2024":                    "project-2024",
		"v2":                      "v2",
		"测试":                      "project",
		"":                        "project",
		"Ünïcode Team":            "n-code-team",
		strings.Repeat("a", 200):  strings.Repeat("a", slugCut),
		strings.Repeat("ab ", 50): strings.TrimRight(strings.Repeat("ab-", 30)[:slugCut], "-"),
	} {
		got := Slugify(in)
		if got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
		if err := CheckSlug(got); err != nil {
			t.Errorf("Slugify(%q) = %q fails CheckSlug: %v", in, got, err)
		}
	}
}

func TestCheckSlug(t *testing.T) {
	for _, bad := range []string{"", "Acme", "acme/api", "-acme", "acme-", "a--b", "123", "acme api", strings.Repeat("a", MaxSlugLen+1), "é"} {
		if err := CheckSlug(bad); !IsKind(err, Validation) {
			t.Errorf("CheckSlug(%q) = %v, want a ValidationError", bad, err)
		}
	}
	for _, good := range []string{"acme", "acme-api-2", "2024-q1", "a"} {
		if err := CheckSlug(good); err != nil {
			t.Errorf("CheckSlug(%q) = %v", good, err)
		}
	}
}

func TestUniqueSlug(t *testing.T) {
	taken := map[string]bool{"acme": true, "acme-2": true}
	got, err := UniqueSlug("acme", func(s string) (bool, error) { return taken[s], nil })
	if err != nil || got != "acme-3" {
		t.Fatalf("UniqueSlug = %q %v, want acme-3", got, err)
	}
}
