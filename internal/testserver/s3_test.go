package testserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

func TestMain(m *testing.M) { Main(m) }

// Without versitygw the harness says how to install it (the tests that
// need it then fail with this message rather than skip).
func TestS3MissingSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := binary([]string{t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "scripts/install-deps.sh test") {
		t.Fatalf("no versitygw: %v", err)
	}
}

func TestBucketsAreFreshAndEmpty(t *testing.T) {
	a, b := Bucket(t), Bucket(t)
	if a.Bucket == b.Bucket {
		t.Fatalf("two tests got bucket %s", a.Bucket)
	}
	s, _ := S3()
	t.Logf("versitygw on %s started in %v", s.Endpoint, s.Startup)
	for o := range s.client.ListObjects(context.Background(), a.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		t.Errorf("new bucket holds %s (%v)", o.Key, o.Err)
	}
}

// The harness finds versitygw where install-deps.sh puts it (GOBIN),
// before one on PATH.
func TestBinaryPrefersGoBin(t *testing.T) {
	gobin, other := t.TempDir(), t.TempDir()
	for _, d := range []string{gobin, other} {
		if err := os.WriteFile(filepath.Join(d, "versitygw"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", other)
	if got, err := binary([]string{filepath.Join(t.TempDir(), "none"), gobin}); err != nil || got != filepath.Join(gobin, "versitygw") {
		t.Errorf("binary = %q, %v", got, err)
	}
	if got, err := binary([]string{t.TempDir()}); err != nil || got != filepath.Join(other, "versitygw") {
		t.Errorf("binary without one in GOBIN = %q, %v", got, err)
	}
}
