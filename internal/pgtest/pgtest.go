// Package pgtest starts a throwaway PostgreSQL server for a test binary and
// hands each test a fresh, empty database on it.
//
// The server is Debian's (postgresql, installed by `scripts/install-deps.sh
// test`): initdb into a temporary directory, then the postmaster listening
// on 127.0.0.1 only, on a free port, with its unix socket in that directory
// and fsync off. It starts on the first call to DSN and is stopped by Main
// (use it from TestMain), which also removes the directory.
//
// As root the server runs as the postgres user (PostgreSQL refuses root);
// otherwise as the current user. It is the test process's child and gets
// SIGQUIT (PostgreSQL's immediate shutdown, as `pg_ctl stop -m immediate`)
// if the test binary dies without stopping it, so a killed `go test`
// leaves no server behind; a later start removes such a run's directory.
//
// A machine without PostgreSQL fails the tests that need it, saying how to
// install it: CI installs it, so a silent skip would hide a missing step.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is one running throwaway PostgreSQL.
type Server struct {
	Dir     string // temporary directory: data/, the socket, server.log
	Port    int
	Version string // the major version, e.g. "15"
	// Startup is how long initdb and the start took.
	Startup time.Duration

	cmd   *exec.Cmd
	done  chan struct{} // closed when the postmaster exits
	mu    sync.Mutex    // serialises admin
	admin *pgx.Conn
	n     atomic.Int64
}

var (
	once   sync.Once
	shared *Server
	errRun error
)

// installHint ends every "PostgreSQL is missing" failure.
const installHint = "run `bash scripts/install-deps.sh test` (it installs Debian's postgresql)"

// Get returns the test binary's server, starting it on first use.
func Get() (*Server, error) {
	once.Do(func() { shared, errRun = Start() })
	return shared, errRun
}

// DSN returns the connection string of a new, empty database (t_1, t_2,
// ...) on the test binary's server. It fails t when the server cannot run.
func DSN(t testing.TB) string {
	t.Helper()
	s, err := Get()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	dsn, err := s.CreateDatabase(context.Background())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dsn
}

// Main runs the tests, then stops the server if one was started: call it
// from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	os.Exit(code)
}

// BinDir finds the directory of initdb and postgres: the newest
// /usr/lib/postgresql/N/bin (Debian), else the one holding initdb on PATH.
func BinDir() (dir, version string, err error) { return binDir("/usr/lib/postgresql/*/bin/initdb") }

func binDir(pattern string) (dir, version string, err error) {
	found, _ := filepath.Glob(pattern)
	sort.Slice(found, func(i, j int) bool { return majorOf(found[i]) > majorOf(found[j]) })
	for _, f := range found {
		d := filepath.Dir(f)
		if isExec(filepath.Join(d, "postgres")) {
			return d, strconv.Itoa(majorOf(f)), nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "postgres")) {
			return d, "", nil
		}
	}
	return "", "", fmt.Errorf("PostgreSQL not found (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH): %s", installHint)
}

func majorOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

const dirPattern = "reportd-pgtest-"

// Start initialises and starts a new server; Stop ends it. Most tests want
// DSN, which shares one server per test binary.
func Start() (*Server, error) {
	began := time.Now()
	bin, version, err := BinDir()
	if err != nil {
		return nil, err
	}
	removeStale()
	dir, err := os.MkdirTemp(baseDir(), dirPattern)
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Version: version, done: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	cred, err := credential(dir)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	for attempt := 0; ; attempt++ {
		if s.Port, err = freePort(); err != nil {
			return nil, err
		}
		err = s.run(bin, data, cred)
		if err == nil {
			break
		}
		if attempt == 2 || !strings.Contains(err.Error(), "already in use") {
			return nil, err
		}
	}
	s.Startup = time.Since(began)
	ok = true
	return s, nil
}

// credential is who runs initdb and postgres: the postgres user when we
// are root (dir is handed to it), else nil (ourselves).
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and there is no postgres user to run PostgreSQL as: %v; %s", err, installHint)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run starts the postmaster and waits until it accepts connections.
func (s *Server) run(bin, data string, cred *syscall.Credential) error {
	logPath := filepath.Join(s.Dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+s.Dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// SIGQUIT is an immediate shutdown. The kernel sends it when the thread
	// that started the postmaster ends, so that thread is locked and kept
	// (waiting for the postmaster) for as long as the test process lives.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
		select {} // keep the locked thread until the process exits
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start postgres: %v", err)
	}
	s.cmd, s.done = cmd, done
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.adminDSN())
		if err == nil {
			s.admin = conn
			return nil
		}
		select {
		case <-done:
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres exited at start:\n%s", b)
		case <-ctx.Done():
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres did not accept connections in 30s: %v\n%s", err, b)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *Server) adminDSN() string { return s.dsn("postgres") }

func (s *Server) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// CreateDatabase creates a new empty database and returns its DSN.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t_%d", s.n.Add(1))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admin == nil {
		return "", errors.New("server stopped")
	}
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.dsn(name), nil
}

// Stop ends the server at once (nothing in it is meant to last) and
// removes its directory.
func (s *Server) Stop() error {
	s.mu.Lock()
	if s.admin != nil {
		s.admin.Close(context.Background())
		s.admin = nil
	}
	s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	}
	return os.RemoveAll(s.Dir)
}

// baseDir is where the server's directory goes: the temporary directory,
// unless the postgres user could not reach it (as root, TMPDIR under a
// private home) or the socket's path would be too long for a unix socket
// (108 bytes); then /tmp.
func baseDir() string {
	d := os.TempDir()
	if len(d) > 60 {
		return "/tmp"
	}
	if os.Geteuid() == 0 {
		for p := d; ; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o001 == 0 {
				return "/tmp"
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	return d
}

// removeStale removes the directories of earlier runs whose test process
// is gone (killed before Main could stop its server).
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(baseDir(), dirPattern+"*"))
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
