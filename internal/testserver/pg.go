// A throwaway PostgreSQL server for a test binary, which hands each test
// a fresh, empty database on it.
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

package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PGServer is one running throwaway PostgreSQL.
type PGServer struct {
	Dir     string // temporary directory: data/, the socket, server.log
	Port    int
	Version string // the major version, e.g. "15"
	// Startup is how long initdb and the start took.
	Startup time.Duration

	proc  *Proc
	bin   string // for Up
	data  string
	cred  *syscall.Credential
	mu    sync.Mutex // serialises admin
	admin *pgx.Conn
	n     atomic.Int64
}

var (
	pgOnce   sync.Once
	pgShared *PGServer
	pgErr    error
)

// pgInstallHint ends every "PostgreSQL is missing" failure.
const pgInstallHint = "run `bash scripts/install-deps.sh test` (it installs Debian's postgresql)"

// PG returns the test binary's server, starting it on first use.
func PG() (*PGServer, error) {
	pgOnce.Do(func() { pgShared, pgErr = StartPG() })
	return pgShared, pgErr
}

// DSN returns the connection string of a new, empty database (t_1, t_2,
// ...) on the test binary's server. It fails t when the server cannot run.
func DSN(t testing.TB) string {
	t.Helper()
	s, err := PG()
	if err != nil {
		t.Fatalf("testserver: PostgreSQL: %v", err)
	}
	dsn, err := s.CreateDatabase(context.Background())
	if err != nil {
		t.Fatalf("testserver: PostgreSQL: %v", err)
	}
	return dsn
}

// OwnPG starts a server of t's own, one the test may take down (Down, Up)
// without disturbing others, stopped when t ends, and returns it with the
// connection string of a new, empty database on it.
func OwnPG(t testing.TB) (*PGServer, string) {
	t.Helper()
	s, err := StartPG()
	if err != nil {
		t.Fatalf("testserver: PostgreSQL: %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	dsn, err := s.CreateDatabase(context.Background())
	if err != nil {
		t.Fatalf("testserver: PostgreSQL: %v", err)
	}
	return s, dsn
}

// stopPG stops the test binary's server, if one was started (Run).
func stopPG() {
	if pgShared != nil {
		if err := pgShared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "testserver: PostgreSQL:", err)
		}
	}
}

// PGBinDir finds the directory of initdb and postgres: the newest
// /usr/lib/postgresql/N/bin (Debian), else the one holding initdb on PATH.
func PGBinDir() (dir, version string, err error) { return binDir("/usr/lib/postgresql/*/bin/initdb") }

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
	return "", "", fmt.Errorf("PostgreSQL not found (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH): %s", pgInstallHint)
}

func majorOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

const pgDirPattern = "reportd-pgtest-"

// StartPG initialises and starts a new server; Stop ends it. Most tests want
// DSN, which shares one server per test binary.
func StartPG() (*PGServer, error) {
	began := time.Now()
	bin, version, err := PGBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := NewDir(baseDir(), pgDirPattern)
	if err != nil {
		return nil, err
	}
	s := &PGServer{Dir: dir, Version: version}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
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
	s.bin, s.data, s.cred = bin, data, cred
	if err := OnFreePort(func(port int) error {
		s.Port = port
		return s.run(bin, data, cred)
	}); err != nil {
		return nil, err
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
		return nil, fmt.Errorf("running as root and there is no postgres user to run PostgreSQL as: %v; %s", err, pgInstallHint)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// run starts the postmaster and waits until it accepts connections.
func (s *PGServer) run(bin, data string, cred *syscall.Credential) error {
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+s.Dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	cmd.Dir = s.Dir
	// SIGQUIT is PostgreSQL's immediate shutdown.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	p, err := Launch(cmd, filepath.Join(s.Dir, "server.log"))
	if err != nil {
		return err
	}
	s.proc = p
	return p.WaitReady(func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, s.adminDSN())
		if err == nil {
			s.admin = conn
		}
		return err
	})
}

func (s *PGServer) adminDSN() string { return s.dsn("postgres") }

func (s *PGServer) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// CreateDatabase creates a new empty database and returns its DSN.
func (s *PGServer) CreateDatabase(ctx context.Context) (string, error) {
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

// Down stops the server (fast shutdown, as `pg_ctl stop -m fast`: every
// client is cut off), keeping its data, for outage tests; Up starts it
// again on the same port. Not an immediate shutdown: this server runs with
// synchronous_commit=off, so that would lose the last commits, which a
// production server does not. Use a server of your own (Start), never the
// pgShared one (Get, DSN).
func (s *PGServer) Down() {
	s.closeAdmin()
	s.proc.Stop(syscall.SIGINT)
}

// Up restarts a server that is Down, on the same port with the same data.
func (s *PGServer) Up() error { return s.run(s.bin, s.data, s.cred) }

// Stop ends the server at pgOnce (nothing in it is meant to last) and
// removes its directory.
func (s *PGServer) Stop() error {
	s.closeAdmin()
	s.proc.Stop(syscall.SIGQUIT)
	return os.RemoveAll(s.Dir)
}

// closeAdmin closes the connection CreateDatabase keeps, if open.
func (s *PGServer) closeAdmin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admin != nil {
		s.admin.Close(context.Background())
		s.admin = nil
	}
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
