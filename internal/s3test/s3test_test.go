package s3test

import (
	"context"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

func TestMain(m *testing.M) { Main(m) }

// Without versitygw the harness says how to install it (the tests that
// need it then fail with this message rather than skip).
func TestMissingSaysHowToInstall(t *testing.T) {
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
	s, _ := Get()
	t.Logf("versitygw on %s started in %v", s.Endpoint, s.Startup)
	for o := range s.client.ListObjects(context.Background(), a.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		t.Errorf("new bucket holds %s (%v)", o.Key, o.Err)
	}
}
