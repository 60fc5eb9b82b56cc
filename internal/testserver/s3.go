// A throwaway S3 server for a test binary, which hands each test a fresh,
// empty bucket on it, as pg.go does for PostgreSQL.
//
// The server is versitygw (S3Version, installed by `scripts/install-deps.sh
// test` into $GOBIN or $(go env GOPATH)/bin) with its posix backend in a temporary
// directory, listening on 127.0.0.1 only, on a free port, with root keys
// made up per run. It starts on the first call to Bucket and is stopped by
// Main (use it from TestMain), which also removes the directory. It is the
// test process's child and gets SIGKILL if the test binary dies without
// stopping it, so a killed `go test` leaves no server behind; a later start
// removes such a run's directory.
//
// A machine without versitygw fails the tests that need it, saying how to
// install it: CI installs it, so a silent skip would hide a missing step.

package testserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/reportd/reportd/internal/blob/s3store"
)

// S3Version is the versitygw release the tests run on (and install-deps.sh
// installs).
const S3Version = "v1.8.0"

// s3InstallHint ends every "versitygw is missing" failure.
const s3InstallHint = "run `bash scripts/install-deps.sh test` (it runs `go install github.com/versity/versitygw/cmd/versitygw@" + S3Version + "`)"

// S3Server is one running throwaway versitygw.
type S3Server struct {
	Dir       string // temporary directory: root/ (the buckets), server.log
	Endpoint  string // 127.0.0.1:port
	AccessKey string
	SecretKey string
	// Startup is how long the start took, until the server answered.
	Startup time.Duration

	proc   *Proc
	bin    string // for Up
	client *minio.Client
	n      atomic.Int64
}

var (
	s3Once   sync.Once
	s3Shared *S3Server
	s3Err    error
)

// S3 returns the test binary's server, starting it on first use.
func S3() (*S3Server, error) {
	s3Once.Do(func() { s3Shared, s3Err = StartS3() })
	return s3Shared, s3Err
}

// Bucket creates a new empty bucket (t-1, t-2, ...) on the test binary's
// server and returns a store config for it. It fails t when the server
// cannot run.
func Bucket(t testing.TB) s3store.Config {
	t.Helper()
	s, err := S3()
	if err != nil {
		t.Fatalf("testserver: S3: %v", err)
	}
	cfg, err := s.CreateBucket(context.Background())
	if err != nil {
		t.Fatalf("testserver: S3: %v", err)
	}
	return cfg
}

// stopS3 stops the test binary's server, if one was started (Run).
func stopS3() {
	if s3Shared != nil {
		if err := s3Shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "testserver: S3:", err)
		}
	}
}

// S3Binary finds versitygw: in $GOBIN or $(go env GOPATH)/bin, where
// install-deps.sh builds the pinned version, else on PATH (where
// install-deps.sh accepts one of that version too).
func S3Binary() (string, error) { return binary(goBinDirs()) }

func binary(dirs []string) (string, error) {
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("versitygw not found (not on PATH, nor in %s): %s", strings.Join(dirs, ", "), s3InstallHint)
}

// goBinDirs are where `go install` puts binaries.
func goBinDirs() []string {
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) == 2 {
			if lines[0] != "" {
				dirs = append(dirs, lines[0])
			}
			for p := range strings.SplitSeq(lines[1], string(os.PathListSeparator)) {
				if p != "" {
					dirs = append(dirs, filepath.Join(p, "bin"))
				}
			}
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, "go", "bin"))
	}
	return dirs
}

const s3DirPattern = "reportd-s3test-"

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// StartS3 starts a new server; Stop ends it. Most tests want Bucket, which
// shares one server per test binary.
func StartS3() (*S3Server, error) {
	began := time.Now()
	bin, err := S3Binary()
	if err != nil {
		return nil, err
	}
	dir, err := NewDir(os.TempDir(), s3DirPattern)
	if err != nil {
		return nil, err
	}
	s := &S3Server{Dir: dir, AccessKey: "reportd" + randHex(6), SecretKey: randHex(20)}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	if err := os.Mkdir(filepath.Join(dir, "root"), 0o755); err != nil {
		return nil, err
	}
	s.bin = bin
	if err := OnFreePort(func(port int) error {
		s.Endpoint = "127.0.0.1:" + strconv.Itoa(port)
		return s.run(bin)
	}); err != nil {
		return nil, err
	}
	s.Startup = time.Since(began)
	ok = true
	return s, nil
}

// run starts versitygw and waits until it answers S3 requests.
func (s *S3Server) run(bin string) error {
	cmd := exec.Command(bin, "--port", s.Endpoint, "--region", "us-east-1", "--quiet",
		"posix", filepath.Join(s.Dir, "root"))
	cmd.Dir = s.Dir
	// The root keys go by environment, not argv (ps shows argv).
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	p, err := Launch(cmd, filepath.Join(s.Dir, "server.log"))
	if err != nil {
		return err
	}
	s.proc = p
	c, err := minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		return err
	}
	s.client = c
	return p.WaitReady(func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := c.ListBuckets(rctx)
		return err
	})
}

// CreateBucket creates a new empty bucket and returns a store config for it.
func (s *S3Server) CreateBucket(ctx context.Context) (s3store.Config, error) {
	if s.client == nil {
		return s3store.Config{}, errors.New("server stopped")
	}
	name := fmt.Sprintf("t-%d", s.n.Add(1))
	if err := s.client.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		return s3store.Config{}, fmt.Errorf("create bucket %s: %w", name, err)
	}
	return s3store.Config{Endpoint: s.Endpoint, Bucket: name, Region: "us-east-1",
		AccessKey: s.AccessKey, SecretKey: s.SecretKey}, nil
}

// Down stops the server, keeping its buckets, for outage tests; Up starts
// it again on the same address. Use a server of your own (Start), never
// the s3Shared one (Get, Bucket).
func (s *S3Server) Down() { s.proc.Stop(syscall.SIGTERM) }

// Up restarts a server that is Down, on the same address with the same data.
func (s *S3Server) Up() error { return s.run(s.bin) }

// Stop ends the server (nothing in it is meant to last) and removes its
// directory.
func (s *S3Server) Stop() error {
	s.client = nil
	s.proc.Stop(syscall.SIGTERM)
	return os.RemoveAll(s.Dir)
}
