package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// options are the parsed flags of one `reportctl watch` run.
type options struct {
	roots          []string // absolute, symlinks resolved
	project        string   // id or name; "" with --project-from-dir
	projectFromDir bool
	createProject  bool
	statePath      string
	settle         time.Duration
	maxWait        time.Duration
	initialScan    string // publish | skip
	recursive      bool
	include        []string
	exclude        []string
	replace        bool
	onSuccess      action
	onFailure      action
	maxAttempts    int
	retryMin       time.Duration
	retryMax       time.Duration
	rescan         time.Duration
	poll           time.Duration
	once           bool
	allowEmpty     bool
	jobs           int
	waitForWriters bool
	drainTimeout   time.Duration
	json           bool
	verbose        bool   // -v: say why files are skipped or not sent yet
	sites          bool   // --sites: each site folder is one unit (sites.go)
	marker         string // --marker: a site is finished when this file is in it
	// meta is the build metadata every report gets (--name, --branch, ...);
	// ciSystem the CI system some of it came from, "" when none.
	meta     report.BuildMeta
	ciSystem string
}

// describeMeta is " name=… branch=… commit=… (from CI)" for the start line, or "".
func describeMeta(m report.BuildMeta, system string) string {
	var b strings.Builder
	for _, f := range []struct {
		k string
		v *string
	}{{"name", m.Name}, {"branch", m.Branch}, {"commit", m.Commit}, {"build_id", m.BuildID}, {"build_url", m.BuildURL}} {
		if f.v != nil {
			fmt.Fprintf(&b, " %s=%s", f.k, *f.v)
		}
	}
	if system != "" {
		b.WriteString(" (build metadata from " + system + ")")
	}
	return b.String()
}

// action is what --on-success / --on-failure do with a file.
type action struct {
	kind string // keep | delete | move
	dir  string // absolute, for move
}

func parseAction(s string, allowDelete bool) (action, error) {
	switch {
	case s == "keep" || s == "":
		return action{kind: "keep"}, nil
	case s == "delete" && allowDelete:
		return action{kind: "delete"}, nil
	case strings.HasPrefix(s, "move:") && len(s) > len("move:"):
		dir, err := filepath.Abs(s[len("move:"):])
		if err != nil {
			return action{}, err
		}
		return action{kind: "move", dir: dir}, nil
	}
	if allowDelete {
		return action{}, fmt.Errorf("want keep, delete or move:DIR, got %q", s)
	}
	return action{}, fmt.Errorf("want keep or move:DIR, got %q", s)
}

// resolveRoots makes every root absolute and resolves symlinks, so event
// paths, state keys and /proc fd links all name a file the same way.
func resolveRoots(dirs []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s is not a directory", d)
		}
		if !seen[real] {
			seen[real] = true
			out = append(out, real)
		}
	}
	return out, nil
}

// defaultStatePath gives each set of watched folders its own state file
// under $XDG_STATE_HOME (~/.local/state), so two watchers of different
// folders never share (and lock) one file.
func defaultStatePath(roots []string) (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory for the default state file; pass --state: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	sorted := append([]string(nil), roots...)
	sort.Strings(sorted)
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\x00")))
	return filepath.Join(base, "reportctl", "watch-"+hex.EncodeToString(sum[:6])+".db"), nil
}

// rootOf returns the watched root that holds path.
func (o *options) rootOf(path string) string {
	best := ""
	for _, r := range o.roots {
		if _, ok := relTo(r, path); ok && len(r) > len(best) {
			best = r
		}
	}
	return best
}
