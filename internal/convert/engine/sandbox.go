package engine

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reportd/reportd/internal/report"
)

// Sandbox runs engine processes under bubblewrap: their own mount, PID, IPC,
// UTS and (unless a job may use the network) network namespaces, a read-only
// view of the system files an engine needs and nothing else of the host, no
// capabilities, a clean environment, and one writable directory of their own.
// The data directory (database, uploads, the serve key) is not in their view.
type Sandbox struct {
	path    string   // bwrap, "" when the engines run unsandboxed
	allowed bool     // convert.unsandboxed
	hide    []string // absolute directories masked by an empty tmpfs (convert.Config.HideDirs, the cache)
	log     *slog.Logger

	once sync.Once
	err  error // why no engine may start; set by probe
}

// Jail is one sandboxed command.
type Jail struct {
	Argv    []string // the engine's command line; Argv[0] is an absolute path
	RW      []string // directories the engine may write: its profile and job directory
	Env     []string // KEY=VALUE, the whole environment the engine sees
	Network bool     // share the host's network (Chromium with AllowNetwork)
}

// roPaths are bound read-only when they exist: programs, libraries, fonts
// and the few files in /etc that the engines read. Everything else of /etc
// (shadow, ssh keys, the daemon's own config) stays out of view.
var roPaths = []string{
	"/usr", "/opt",
	"/etc/fonts", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
	"/etc/hosts", "/etc/resolv.conf", "/etc/host.conf", "/etc/gai.conf",
	"/etc/ssl", "/etc/ca-certificates", "/etc/alternatives", "/etc/libreoffice",
	"/etc/mime.types", "/etc/python3", "/etc/python3.11",
	"/var/cache/fontconfig", "/usr/share/fonts",
}

// mergedUsr are the top-level directories that merged-/usr systems make
// symlinks into /usr; elsewhere they are real directories, bound read-only.
var mergedUsr = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// NewSandbox returns the sandbox that bwrap (a name or path; "" is "bwrap")
// provides; unsandboxed is convert.unsandboxed; hide lists directories
// (the data directory, the PDF cache) masked wherever they lie below a
// bound path.
func NewSandbox(bwrap string, unsandboxed bool, hide []string, log *slog.Logger) *Sandbox {
	s := &Sandbox{allowed: unsandboxed, log: log}
	for _, d := range hide {
		if abs, err := filepath.Abs(d); err == nil && d != "" {
			s.hide = append(s.hide, abs)
		}
	}
	path := bwrap
	if path == "" {
		path = "bwrap"
	}
	if p, err := exec.LookPath(path); err == nil {
		s.path = p
	} else {
		s.err = fmt.Errorf("bubblewrap (%s) is not installed: %w", path, err)
	}
	return s
}

// Ready probes the sandbox once, by running `true` in it, and reports
// whether engines may start: sandboxed, or unsandboxed when the sandbox is
// unavailable and convert.unsandboxed allows that. The reason is logged
// either way.
func (s *Sandbox) Ready() error {
	s.once.Do(func() {
		if s.err == nil {
			s.err = s.probe()
		}
		switch {
		case s.err == nil:
			s.log.Info("conversion engines run sandboxed", "bwrap", s.path)
		case s.allowed:
			s.log.Warn("conversion engines run UNSANDBOXED (convert.unsandboxed: true): uploaded documents can reach the network and the host's files",
				"reason", s.err)
			s.path, s.err = "", nil
		default:
			s.log.Error("conversion engines disabled: the sandbox is unavailable", "reason", s.err)
			// The engine's fault, not a document's: never remembered as a
			// document's failure (failures.go).
			s.err = Fault(report.Wrap(report.Conversion, s.err,
				"conversion is disabled: the engine sandbox (bubblewrap) cannot run here ("+s.err.Error()+
					"); install bubblewrap and allow user namespaces, or set convert.unsandboxed: true"))
		}
	})
	return s.err
}

func (s *Sandbox) probe() error {
	dir, err := os.MkdirTemp("", "reportd-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path, args := s.Command(Jail{Argv: []string{"/bin/sh", "-c", "test -w \"$HOME\""}, RW: []string{dir}, Env: []string{"HOME=" + dir}})
	if out, err := exec.Command(path, args[1:]...).CombinedOutput(); err != nil {
		if len(out) > 0 {
			return fmt.Errorf("%s: %w: %s", s.path, err, firstLine(out))
		}
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

// Command returns the program and argv (argv[0] included) that run j: j
// itself when unsandboxed, else bwrap around it.
func (s *Sandbox) Command(j Jail) (string, []string) {
	if s.path == "" {
		return j.Argv[0], j.Argv
	}
	a := []string{s.path}
	for _, p := range roPaths {
		a = append(a, "--ro-bind-try", p, p)
	}
	for _, p := range mergedUsr {
		if target, err := os.Readlink(p); err == nil {
			a = append(a, "--symlink", target, p)
		} else {
			a = append(a, "--ro-bind-try", p, p)
		}
	}
	// A data directory that lies below a bound path (/opt/reportd/data,
	// say) is masked; elsewhere it is not in the view to begin with.
	for _, d := range s.hide {
		if underAny(d, roPaths) {
			a = append(a, "--tmpfs", d)
		}
	}
	a = append(a,
		"--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		// The engine's tree dies with this bwrap (the PID namespace's
		// init is its child), and it gets no controlling terminal.
		"--die-with-parent", "--new-session",
		"--cap-drop", "ALL", "--clearenv")
	if !j.Network {
		a = append(a, "--unshare-net")
	}
	for _, kv := range j.Env {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	for _, d := range j.RW {
		a = append(a, "--bind", d, d)
	}
	a = append(a, "--chdir", "/", "--")
	return s.path, append(a, j.Argv...)
}

// underAny reports whether dir is one of roots or below one.
func underAny(dir string, roots []string) bool {
	for _, r := range roots {
		if dir == r || strings.HasPrefix(dir, r+"/") {
			return true
		}
	}
	return false
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

// EngineEnv is the whole environment of an engine: no variable of the
// daemon's (tokens, proxies, credentials) reaches it.
func EngineEnv(home string, extra ...string) []string {
	return append([]string{"PATH=/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=/tmp"}, extra...)
}

// AbsPath resolves a program name to an absolute path, as the sandbox runs
// it without the daemon's PATH.
func AbsPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	if p, err = filepath.Abs(p); err != nil {
		return "", err
	}
	return p, nil
}

// Path is bwrap's path, "" when engines run unsandboxed (after Ready:
// unsandboxed as allowed) or bwrap is missing.
func (s *Sandbox) Path() string { return s.path }
