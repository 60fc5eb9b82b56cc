package version

import "testing"

func TestFromModule(t *testing.T) {
	for v, want := range map[string]string{
		"":                                   "devel",
		"(devel)":                            "devel",
		"v0.0.0-20261127223000-9b1daa4d467a": "devel",
		"v0.0.0-20261127223000-9b1daa4d467a+dirty": "devel",
		"v1.3.1-0.20261127223000-9b1daa4d467a":     "devel",
		"v1.2.3":                                   "v1.2.3",
	} {
		if got := fromModule(v); got != want {
			t.Errorf("fromModule(%q) = %q, want %q", v, got, want)
		}
	}
}

// TestString: a build without -X (this test binary) says devel.
func TestString(t *testing.T) {
	if got := String(); got != "devel" {
		t.Errorf("String() = %q, want devel", got)
	}
}
