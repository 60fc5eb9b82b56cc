// Package s3test starts a throwaway S3 server for a test binary and hands
// each test a fresh, empty bucket on it, as internal/pgtest does for
// PostgreSQL.
//
// The server is versitygw (Version, installed by `scripts/install-deps.sh
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
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// Version is the versitygw release the tests run on (and install-deps.sh
// installs).
const Version = "v1.8.0"

// installHint ends every "versitygw is missing" failure.
const installHint = "run `bash scripts/install-deps.sh test` (it runs `go install github.com/versity/versitygw/cmd/versitygw@" + Version + "`)"

// Server is one running throwaway versitygw.
type Server struct {
	Dir       string // temporary directory: root/ (the buckets), server.log
	Endpoint  string // 127.0.0.1:port
	AccessKey string
	SecretKey string
	// Startup is how long the start took, until the server answered.
	Startup time.Duration

	cmd    *exec.Cmd
	done   chan struct{} // closed when the server exits
	client *minio.Client
	n      atomic.Int64
}

var (
	once   sync.Once
	shared *Server
	errRun error
)

// Get returns the test binary's server, starting it on first use.
func Get() (*Server, error) {
	once.Do(func() { shared, errRun = Start() })
	return shared, errRun
}

// Bucket creates a new empty bucket (t-1, t-2, ...) on the test binary's
// server and returns a store config for it. It fails t when the server
// cannot run.
func Bucket(t testing.TB) s3store.Config {
	t.Helper()
	s, err := Get()
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	cfg, err := s.CreateBucket(context.Background())
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	return cfg
}

// Main runs the tests, then stops the server if one was started: call it
// from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "s3test:", err)
		}
	}
	os.Exit(code)
}

// Binary finds versitygw: in $GOBIN or $(go env GOPATH)/bin, where
// install-deps.sh builds the pinned version, else on PATH (where
// install-deps.sh accepts one of that version too).
func Binary() (string, error) { return binary(goBinDirs()) }

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
	return "", fmt.Errorf("versitygw not found (not on PATH, nor in %s): %s", strings.Join(dirs, ", "), installHint)
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

const dirPattern = "reportd-s3test-"

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Start starts a new server; Stop ends it. Most tests want Bucket, which
// shares one server per test binary.
func Start() (*Server, error) {
	began := time.Now()
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	removeStale()
	dir, err := os.MkdirTemp("", dirPattern)
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, AccessKey: "reportd" + randHex(6), SecretKey: randHex(20), done: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, "root"), 0o755); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.Endpoint = "127.0.0.1:" + strconv.Itoa(port)
		err = s.run(bin)
		if err == nil {
			break
		}
		if attempt == 2 || !strings.Contains(err.Error(), "address already in use") {
			return nil, err
		}
		s.done = make(chan struct{})
	}
	s.Startup = time.Since(began)
	ok = true
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run starts versitygw and waits until it answers S3 requests.
func (s *Server) run(bin string) error {
	logPath := filepath.Join(s.Dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--port", s.Endpoint, "--region", "us-east-1", "--quiet",
		"posix", filepath.Join(s.Dir, "root"))
	cmd.Dir = s.Dir
	// The root keys go by environment, not argv (ps shows argv).
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The kernel sends Pdeathsig when the thread that started the server
	// ends, so that thread is locked and kept (waiting for the server) for
	// as long as the test process lives.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	started := make(chan error, 1)
	done := s.done
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := cmd.Start(); err != nil {
			started <- err
			close(done)
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start versitygw: %w", err)
	}
	s.cmd = cmd
	c, err := minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		return err
	}
	s.client = c
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.ListBuckets(rctx)
		rcancel()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("versitygw exited at start:\n%s", b)
		case <-ctx.Done():
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("versitygw did not answer in 30s: %v\n%s", err, b)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// CreateBucket creates a new empty bucket and returns a store config for it.
func (s *Server) CreateBucket(ctx context.Context) (s3store.Config, error) {
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

// Stop ends the server (nothing in it is meant to last) and removes its
// directory.
func (s *Server) Stop() error {
	s.client = nil
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	}
	return os.RemoveAll(s.Dir)
}

// removeStale removes the directories of earlier runs whose test process
// is gone (killed before Main could stop its server).
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPattern+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}
