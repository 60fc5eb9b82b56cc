package testfixture

import (
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

// Decode undoes the Content-Encoding enc ("" for none, gzip or br) of an
// answer's body; any other encoding fails the test.
func Decode(t testing.TB, enc, body string) string {
	t.Helper()
	var r io.Reader = strings.NewReader(body)
	switch enc {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatalf("decode gzip: %v", err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(r)
	default:
		t.Fatalf("Content-Encoding %q", enc)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", enc, err)
	}
	return string(b)
}
