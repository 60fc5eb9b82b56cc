package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/report"
)

// Deps are what the command needs from the rest of reportctl.
type Deps struct {
	Client         func() (report.Service, error) // the configured API client
	Stdout, Stderr io.Writer
	// Meta, when set, gives watch upload's build metadata flags (--name,
	// --branch, --commit, --build-url, --build-id, --no-ci-metadata) and
	// their REPORTCTL_* variables and CI environment detection.
	Meta MetaFlags
}

// MetaFlags are upload's build metadata flags, shared with watch.
type MetaFlags interface {
	// Register adds the flags to fl.
	Register(fl *pflag.FlagSet)
	// Resolve applies flag > REPORTCTL_* > CI environment; system is the
	// CI system the values came from, "" when none.
	Resolve(fl *pflag.FlagSet) (m report.BuildMeta, system string)
}

// flags holds the raw flag values; options is their parsed form.
type flags struct {
	project, state, initialScan, onSuccess, onFailure string
	marker                                            string
	projectFromDir, createProject, recursive, replace bool
	sites                                             bool
	once, allowEmpty, waitForWriters                  bool
	verbose                                           bool
	include, exclude                                  []string
	settle, maxWait, retryMin, retryMax               time.Duration
	rescan, poll, drainTimeout                        time.Duration
	maxAttempts, jobs                                 int
}

// NewCommand returns `reportctl watch`.
func NewCommand(deps Deps) *cobra.Command {
	var f flags
	cmd := &cobra.Command{
		Use:   "watch DIR... (--project ID | --project-from-dir)",
		Short: "Publish every report file dropped into folders, exactly once",
		Long: `Watch folders and publish each new report file (` + report.TypeExts(" ", " ") + `)
once it is completely written: when its size and mtime have not changed for
--settle (and no process holds it open for writing, on Linux).

What was published (path, size, mtime, sha256, report id) is kept in a small
state file, so a restart publishes nothing twice and changed content is
published again (--replace then deletes the previous report). While the
server is unreachable files are queued, in the state file too, and published
when it is back.

Ignored: hidden files and folders, editor swap and temp files (*.swp, *~,
.#*, *.tmp, *.part, *.crdownload, ~$*), other extensions, and the state file
and --on-success/--on-failure folders. --include/--exclude take globs
(doublestar: ** matches across folders); a glob without "/" matches the base
name at any depth.

SITES
With --sites each folder directly inside a watched folder (inside a project
folder with --project-from-dir) is published as ONE site report, a
multi-file HTML report such as coverage.py's htmlcov/ or a Playwright
report: once nothing in it has changed for --settle, or, with --marker NAME,
as soon as a file NAME appears in it (never before; the marker is not
uploaded). The folder is sent as a tar.zst of all its files, hidden ones too,
with the folder as the site's root; a symbolic link is followed only to a
file inside the folder, any other link or special file refuses the folder
(set aside like a rejected file after --max-attempts). Published folders
are remembered in the state file like files: a restart publishes nothing
twice, and a folder whose content changes is published again (--replace
deletes the previous report). --include/--exclude then match the site
folders' paths; loose files beside them are not published.

BUILD METADATA
Every report gets upload's build metadata: --name (a stable name, so that
the reports of a folder per run group for latest links, badges and
retention; default: from the file or folder name), --branch, --commit,
--build-url and --build-id, else REPORTCTL_NAME, REPORTCTL_BRANCH, ..., else
(unless --no-ci-metadata) the CI environment, as 'reportctl upload' reads it
(see 'reportctl help environment'). They apply to every report this watch
publishes.

EXIT STATUS (--once)
  0  every file found was published or was published before
  1  a file could not be published, or --project does not exist
  2  bad flags or arguments
  3  an upload was refused for want of a valid token (also without --once:
     watch stops instead of retrying; files stay queued for the next run)
  4  no report file found (--allow-empty makes this 0)
  5  the server could not be reached (files stay queued for the next run)
  130 interrupted
Without --once, SIGTERM lets in-flight uploads finish, saves the state and
exits 0; SIGINT does the same and exits 130. See docs/watch.md.`,
		Example: `  reportctl watch /srv/drop --project 3 --state /var/lib/reportctl/watch.db
  reportctl watch /srv/drop --project-from-dir --create-project --on-success move:/srv/done
  reportctl watch ./out --project 3 --once --include '**/*.pdf'
  reportctl watch /srv/sites --project 3 --sites --marker .done
  reportctl watch ./runs --project 3 --sites --name e2e --branch main`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			jsonOut, _ := cmd.Flags().GetBool("json")
			opts, err := f.parse(args, jsonOut)
			if err != nil {
				return exitcode.With(exitcode.Usage, err)
			}
			if deps.Meta != nil {
				opts.meta, opts.ciSystem = deps.Meta.Resolve(cmd.Flags())
			}
			return run(cmd.Context(), deps, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.project, "project", "", "project `ID` (or name) to publish into")
	fl.BoolVar(&f.projectFromDir, "project-from-dir", false, "publish each first-level subfolder into the project of that name (implies --recursive)")
	fl.BoolVar(&f.createProject, "create-project", false, "create projects named by --project or --project-from-dir that do not exist")
	fl.StringVar(&f.state, "state", "", "state `FILE` (default ~/.local/state/reportctl/watch-<hash of the folders>.db, or under $XDG_STATE_HOME)")
	fl.DurationVar(&f.settle, "settle", 2*time.Second, "a file is finished when unchanged for this long")
	fl.DurationVar(&f.maxWait, "max-wait", 5*time.Minute, "publish a file that keeps changing after this long anyway")
	fl.StringVar(&f.initialScan, "initial-scan", "publish", "files already there at start: publish|skip")
	fl.BoolVarP(&f.recursive, "recursive", "r", false, "watch subfolders too, including ones created later")
	fl.StringArrayVar(&f.include, "include", nil, "publish only files matching this `glob` (repeatable)")
	fl.StringArrayVar(&f.exclude, "exclude", nil, "never publish files or enter folders matching this `glob` (repeatable)")
	fl.BoolVar(&f.replace, "replace", false, "when a file's content changes, delete its previous report after the new one is uploaded")
	fl.StringVar(&f.onSuccess, "on-success", "keep", "after publishing: keep|delete|move:DIR")
	fl.StringVar(&f.onFailure, "on-failure", "keep", "after --max-attempts rejections: keep|move:DIR")
	fl.IntVar(&f.maxAttempts, "max-attempts", 3, "rejections (validation errors) before a file counts as failed")
	fl.DurationVar(&f.retryMin, "retry-min", time.Second, "first retry delay (doubles per attempt)")
	fl.DurationVar(&f.retryMax, "retry-max", 2*time.Minute, "retry delay cap (server probes during an outage are capped at 15s)")
	fl.DurationVar(&f.rescan, "rescan-interval", 10*time.Minute, "rescan all folders this often to catch missed events (0 disables)")
	fl.DurationVar(&f.poll, "poll", 0, "no file system events: rescan this often (for network file systems)")
	fl.BoolVar(&f.once, "once", false, "scan, publish and exit (for cron and CI)")
	fl.BoolVar(&f.allowEmpty, "allow-empty", false, "with --once, exit 0 when no report file is found")
	fl.IntVarP(&f.jobs, "jobs", "j", 8, "concurrent uploads")
	fl.BoolVar(&f.waitForWriters, "wait-for-writers", runtime.GOOS == "linux", "also wait while a process holds the file open for writing (Linux: a read lease, else /proc)")
	fl.DurationVar(&f.drainTimeout, "drain-timeout", 30*time.Second, "on shutdown, wait this long for in-flight uploads")
	fl.BoolVar(&f.sites, "sites", false, "publish each folder inside DIR (inside each project folder with --project-from-dir) as one site, once finished")
	fl.StringVar(&f.marker, "marker", "", "with --sites: a folder is finished when a file `NAME` (such as .done) appears in it (implies --sites)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "say why a file is skipped (ignored, unsupported type, excluded) or not sent yet (settling, open for writing)")
	if deps.Meta != nil {
		deps.Meta.Register(fl)
	}
	return cmd
}

func (f *flags) parse(args []string, jsonOut bool) (*options, error) {
	o := &options{
		project: f.project, projectFromDir: f.projectFromDir, createProject: f.createProject,
		settle: f.settle, maxWait: f.maxWait, initialScan: f.initialScan,
		recursive: f.recursive || f.projectFromDir, include: f.include, exclude: f.exclude,
		replace: f.replace, maxAttempts: f.maxAttempts, retryMin: f.retryMin, retryMax: f.retryMax,
		rescan: f.rescan, poll: f.poll, once: f.once, allowEmpty: f.allowEmpty, jobs: f.jobs,
		waitForWriters: f.waitForWriters, drainTimeout: f.drainTimeout, json: jsonOut,
		verbose: f.verbose, sites: f.sites || f.marker != "", marker: f.marker,
	}
	o.recursive = o.recursive || o.sites
	switch {
	case f.project == "" && !f.projectFromDir:
		return nil, errors.New("--project or --project-from-dir is required")
	case f.initialScan != "publish" && f.initialScan != "skip":
		return nil, fmt.Errorf("--initial-scan: want publish or skip, got %q", f.initialScan)
	case f.settle <= 0 || f.maxWait < f.settle:
		return nil, errors.New("--settle must be positive and --max-wait at least --settle")
	case f.jobs < 1 || f.maxAttempts < 1:
		return nil, errors.New("-j and --max-attempts must be at least 1")
	case f.retryMin <= 0 || f.retryMax < f.retryMin:
		return nil, errors.New("--retry-min must be positive and --retry-max at least --retry-min")
	case f.poll < 0 || f.rescan < 0:
		return nil, errors.New("--poll and --rescan-interval cannot be negative")
	case f.marker != "" && (strings.ContainsAny(f.marker, `/\`) || f.marker == "." || f.marker == ".."):
		return nil, fmt.Errorf("--marker: want a file name such as .done, got %q", f.marker)
	}
	var err error
	if o.roots, err = resolveRoots(args); err != nil {
		return nil, err
	}
	if o.onSuccess, err = parseAction(f.onSuccess, true); err != nil {
		return nil, fmt.Errorf("--on-success: %w", err)
	}
	if o.onFailure, err = parseAction(f.onFailure, false); err != nil {
		return nil, fmt.Errorf("--on-failure: %w", err)
	}
	o.statePath = f.state
	if o.statePath == "" {
		if o.statePath, err = defaultStatePath(o.roots); err != nil {
			return nil, err
		}
	}
	if o.statePath, err = absNoFollow(o.statePath); err != nil {
		return nil, err
	}
	return o, nil
}

// run wires the pieces of one watch run together.
func run(parent context.Context, deps Deps, o *options) error {
	if parent == nil {
		parent = context.Background()
	}
	svc, err := deps.Client()
	if err != nil {
		return err
	}
	if id, err := strconv.ParseInt(o.project, 10, 64); err == nil && !o.projectFromDir {
		// A wrong --project would otherwise fail every file, one by one;
		// an unreachable server is fine here (files queue until it is back).
		cctx, cancel := context.WithTimeout(parent, 3*time.Second)
		_, err := svc.GetProject(cctx, id)
		cancel()
		if report.IsKind(err, report.NotFound) {
			return exitcode.With(exitcode.Failed, fmt.Errorf("--project %d: no such project", id))
		}
	}
	// SIGTERM (systemd stop) is a normal end: finish uploads and exit 0.
	// SIGINT does the same but exits 130, as an interrupted command does.
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sigs)
	var sig os.Signal
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		select {
		case sig = <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	// which tells what ended the run. reportctl's main also cancels the
	// parent on SIGTERM, so the signal may still be in the channel.
	which := func() os.Signal {
		cancel()
		<-watcherDone
		if sig == nil {
			select {
			case sig = <-sigs:
			default:
			}
		}
		return sig
	}

	out := deps.Stdout
	if out == nil {
		out = os.Stdout
	}
	log := &eventLog{w: out, json: o.json, now: time.Now}
	ignored := []string{o.statePath, o.statePath + ".lock", o.onSuccess.dir, o.onFailure.dir}
	flt, err := newFilter(o.include, o.exclude, ignored)
	if err != nil {
		return exitcode.With(exitcode.Usage, err)
	}
	waiting := time.AfterFunc(time.Second, func() {
		log.emit(Event{Event: evWarning, Message: "waiting for the state file's lock: is another watcher using " + o.statePath + "?"})
	})
	st, err := openStore(o.statePath, o.drainTimeout+5*time.Second)
	waiting.Stop()
	if err != nil {
		return err
	}
	defer st.close()

	r := newRunner(o, svc, st, flt, log)
	if !o.once && o.poll == 0 {
		if r.dirs.fsw, err = fsnotify.NewWatcher(); err != nil {
			if errors.Is(err, syscall.EMFILE) {
				err = fmt.Errorf("%w: raise `sysctl fs.inotify.max_user_instances`, or use --poll", err)
			}
			return err
		}
	}
	mode := "watch"
	switch {
	case o.once:
		mode = "once"
	case o.poll > 0:
		mode = "poll"
	}
	if !o.once {
		log.emit(Event{Event: evStart, Message: mode + " state=" + o.statePath + describeMeta(o.meta, o.ciSystem), Count: len(o.roots)})
	}
	err = r.run(ctx)
	interrupted := ctx.Err() != nil
	sig = which()
	switch {
	case o.once && interrupted:
		return exitcode.With(exitcode.Interrupted, context.Canceled)
	case o.once || err != nil:
		return err
	case sig == syscall.SIGTERM:
		return nil
	case sig != nil:
		return exitcode.With(exitcode.Interrupted, context.Canceled)
	}
	return parent.Err()
}

// absNoFollow makes path absolute without resolving its last element, which
// may not exist yet; the folder is resolved so the filter's prefix match on
// the watched roots (also resolved) works.
func absNoFollow(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs)), nil
	}
	return abs, nil
}
