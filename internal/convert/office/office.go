package office

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// officeHelper is run with Debian's python3 (the one with python3-uno). It
// keeps one soffice warm per worker and converts one job per stdin line.
//
//go:embed office_helper.py
var officeHelper string

// warmupPPTX is converted once by each new worker, so that the first real
// job does not pay for loading the import and export filters.
//
//go:embed warmup.pptx
var warmupPPTX []byte

// officeStartTimeout bounds a worker's start, which creates a fresh profile
// the first time (a few seconds on a busy 2-core machine).
const officeStartTimeout = 90 * time.Second

// officeKillWait bounds how long a kill waits for a worker's helper to exit
// and its output to close (reap).
const officeKillWait = 15 * time.Second

// office is the LibreOffice pool: cfg.OfficeWorkers workers, each a helper
// process with its own soffice and its own directory (profile and job; a
// shared profile makes parallel jobs fail), each in its own sandbox (or,
// unsandboxed, process group) so a timeout kills the helper and soffice
// together.
type office struct {
	cfg      *Config
	log      *slog.Logger
	met      *engine.Metrics
	box      *engine.Sandbox
	workDir  string
	soffice  string // absolute: the sandbox has no PATH of the daemon's
	missing  error  // set when the engine cannot run here at all
	gate     *engine.Gate
	workers  []*officeWorker
	jobs     chan *officeJob
	quit     chan struct{}
	wg       sync.WaitGroup
	startOne sync.Once
	seq      atomic.Int64 // for unique pipe names
	done     atomic.Int64 // conversions run by the engine, for tests
	restarts atomic.Int64
}

type officeJob struct {
	ctx    context.Context
	in     string
	out    string
	office report.Office // import filter, fallback to type detection, document service, export filter
	result chan error
}

// officeOf returns how LibreOffice loads and exports a type: the type
// table's Office row (report.TypeInfo). The import filter is named so
// that a file is never opened as something else (a fake .pptx that is
// really text would otherwise open in Writer and "convert" fine). A .ppt
// that its filter cannot load (PowerPoint 95 or 4.0: LibreOffice's
// "PowerPoint 3" filter) is loaded with the filter LibreOffice's type
// detection picks (Office.Detect), if that filter makes the row's document
// service; a Word or Excel file is still refused.
func officeOf(t report.FileType) report.Office {
	o := t.Info().Office
	o.Detect = o.Detect && !officeNoDetect.Load()
	return o
}

// officeNoDetect turns the type detection fallback off, for a test's control.
var officeNoDetect atomic.Bool

// newOffice makes a pool of n workers named name-0, name-1, ... (their
// directories under workDir, and the pool's queue metric).
func newOffice(cfg *Config, log *slog.Logger, met *engine.Metrics, box *engine.Sandbox, workDir, name string, n int) *office {
	o := &office{
		cfg:     cfg,
		log:     log,
		met:     met,
		box:     box,
		workDir: workDir,
		gate:    engine.NewGate(n, cfg.QueueSize, met.QueueDepth(name)),
		jobs:    make(chan *officeJob, n+cfg.QueueSize),
		quit:    make(chan struct{}),
	}
	for i := range n {
		dir := filepath.Join(workDir, fmt.Sprintf("%s-%d", name, i))
		w := &officeWorker{o: o, id: i, dir: dir,
			profile: filepath.Join(dir, "profile"), job: filepath.Join(dir, "job")}
		w.sup = w.newSupervisor()
		o.workers = append(o.workers, w)
	}
	soffice, err := engine.AbsPath(cfg.SofficePath)
	o.soffice = soffice
	if err != nil {
		o.missing = report.Wrap(report.Conversion, err,
			"PowerPoint conversion needs LibreOffice, which is not installed: install libreoffice-impress-nogui")
	} else if _, err := os.Stat(cfg.PythonPath); err != nil {
		o.missing = report.Wrap(report.Conversion, err,
			"PowerPoint conversion needs Python with UNO, which is not installed: install python3-uno")
	}
	return o
}

// usable reports why the engine cannot run, or nil.
func (o *office) usable() error {
	if o.missing != nil {
		return engine.Fault(o.missing)
	}
	return o.box.Ready()
}

// start launches the workers; each warms its soffice at once.
func (o *office) start() {
	o.startOne.Do(func() {
		if err := o.usable(); err != nil {
			o.log.Warn("PowerPoint conversion disabled", "err", err)
			return
		}
		for _, w := range o.workers {
			o.wg.Add(1)
			go w.loop()
		}
	})
}

func (o *office) close() {
	select {
	case <-o.quit:
	default:
		close(o.quit)
	}
	o.wg.Wait()
}

// convert turns the presentation at in into a PDF at out. The caller
// holds a slot of o.gate (Engine.Convert).
func (o *office) convert(ctx context.Context, typ report.FileType, in, out string) error {
	if err := o.usable(); err != nil {
		return err
	}
	o.start()
	j := &officeJob{ctx: ctx, in: in, out: out, office: officeOf(typ), result: make(chan error, 1)}
	select {
	case o.jobs <- j: // never blocks: the gate bounds the jobs to the workers' number
	case <-o.quit:
		return report.Errorf(report.Unavailable, "conversion engines are shutting down")
	}
	select {
	case err := <-j.result:
		return err
	case <-ctx.Done():
		return report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
	case <-o.quit:
		return report.Errorf(report.Unavailable, "conversion engines are shutting down")
	}
}

// officeWorker owns one helper process at a time, run by its supervisor
// (engine/supervisor.go), and replaces it after a crash, a timeout,
// MaxJobsPerWorker jobs, or MaxWorkerRSS of memory (fault.go).
//
// A worker's directory is all of the host its sandbox may write (and, below
// /usr and a few /etc files, see): profile/ for soffice, job/ for the one
// job at hand, which gets a copy of the input and leaves the PDF there.
type officeWorker struct {
	o       *office
	id      int
	dir     string
	profile string
	job     string
	sup     *engine.Supervisor[*officeProc]

	cmd     *exec.Cmd
	exited  <-chan struct{} // closes when cmd has exited and been reaped
	stdin   io.WriteCloser
	replies chan string // lines from the helper; closed when it exits

	pid        atomic.Int64 // bwrap's (or unsandboxed the helper's), which leads the process group; 0 when down
	sofficePID atomic.Int64 // as seen from here, not from inside the sandbox
}

// officeProc is a worker's helper process (with its soffice) as the
// supervisor sees it; the worker's fields hold its pipes, one at a time.
type officeProc struct {
	engine.ProcState
	w   *officeWorker
	pid int
}

func (p *officeProc) RootPID() int { return p.pid }

// exited: soffice died while idle (OOM killer, a crash), which the helper
// would only notice mid-job; the supervisor replaces it before the job.
func (p *officeProc) Exited() bool {
	s := p.w.sofficePID.Load()
	return s != 0 && !engine.Alive(int(s))
}

// newSupervisor runs w's processes: replaced after MaxJobsPerWorker jobs
// or over MaxWorkerRSS after any job, and by fault.go's rule after a
// failed one. The worker's loop starts the successor ahead of the next job.
func (w *officeWorker) newSupervisor() *engine.Supervisor[*officeProc] {
	return &engine.Supervisor[*officeProc]{
		Name:   "LibreOffice worker",
		Engine: "office",
		Policy: engine.RecyclePolicy{
			MaxJobs:      w.o.cfg.MaxJobsPerWorker,
			MaxRSS:       w.o.cfg.MaxWorkerRSS,
			MeasureEvery: 1,
		},
		Launch: func() (*officeProc, error) {
			if err := w.spawn(); err != nil {
				return nil, err
			}
			return &officeProc{w: w, pid: w.cmd.Process.Pid}, nil
		},
		Stop:     func(*officeProc) { w.reap() },
		Log:      w.o.log.With("worker", w.id),
		Met:      w.o.met,
		Restarts: &w.o.restarts,
		OverMem:  engine.OverMemory,
	}
}

func (w *officeWorker) loop() {
	defer w.o.wg.Done()
	defer w.stop()
	var failedAt time.Time
	for {
		// Warm up ahead of the next job, but do not spin on a broken install.
		if !w.sup.Running() && time.Since(failedAt) > 5*time.Second {
			if err := w.sup.Warm(); err != nil {
				failedAt = time.Now()
				w.o.log.Error("LibreOffice worker failed to start", "worker", w.id, "err", err)
			}
		}
		select {
		case <-w.o.quit:
			return
		case j := <-w.o.jobs:
			if j.ctx.Err() != nil {
				j.result <- report.Wrap(report.Unavailable, j.ctx.Err(), "conversion cancelled")
				continue
			}
			err, retry, started := w.attempt(j)
			if !started {
				failedAt = time.Now()
				j.result <- err
				continue
			}
			if retry && j.ctx.Err() == nil {
				w.o.log.Info("LibreOffice job retried on a fresh worker", "worker", w.id, "err", err)
				first := err
				if err, _, started = w.attempt(j); !started {
					failedAt = time.Now()
				} else if crashed(first) && crashed(err) {
					// Two workers died under this deck: the deck's fault,
					// remembered like any other (convert's failures.go).
					err = report.Wrap(report.Conversion, err,
						"LibreOffice crashed converting the presentation, twice, on two workers")
				}
			}
			j.result <- err
		}
	}
}

type helperReply struct {
	Ready bool   `json:"ready"`
	PID   int    `json:"pid"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	// Encrypted: LibreOffice said the deck is password-protected.
	Encrypted bool `json:"encrypted"`
	// Died: soffice exited during the job (status: its exit status, -N
	// for signal N; peak: its peak resident bytes); the helper exits too.
	Died   bool  `json:"died"`
	Status int   `json:"status"`
	Peak   int64 `json:"peak"`
	// Phase timings of a conversion, for debug logs.
	LoadMS  float64 `json:"load_ms"`
	StoreMS float64 `json:"store_ms"`
}

func (w *officeWorker) spawn() error {
	ctx, cancel := context.WithTimeout(context.Background(), officeStartTimeout)
	defer cancel()
	pipe := fmt.Sprintf("reportd-%d-%d-%d", os.Getpid(), w.id, w.o.seq.Add(1))
	env := engine.EngineEnv(w.profile, "SAL_USE_VCLPLUGIN=svp")
	path, args := w.o.box.Command(engine.Jail{
		Argv: []string{w.o.cfg.PythonPath, "-c", officeHelper, w.o.soffice, "file://" + w.profile, pipe,
			strconv.FormatInt(max(0, w.o.cfg.MaxWorkerRSS), 10)},
		RW:  []string{w.dir},
		Env: env,
	})
	cmd := &exec.Cmd{Path: path, Args: args, Env: env}
	// Its own group, so killGroup reaches bwrap (whose PID namespace ends
	// with it) or, unsandboxed, the helper and soffice; and die with reportd.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Wait returns this long after the helper exits even if a process it
	// left holds stderr open (kill then finds that process by its profile).
	cmd.WaitDelay = 2 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	// Not StdoutPipe: Wait, which runs as soon as the helper exits, would
	// close it under the reader before the last reply is read.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout = stdoutW
	for _, d := range []string{w.profile, w.job} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	exited, err := engine.StartLocked(cmd)
	stdoutW.Close()
	if err != nil {
		stdout.Close()
		return err
	}
	replies := make(chan string, 1)
	go func() {
		defer close(replies)
		defer stdout.Close()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			replies <- sc.Text()
		}
	}()
	w.cmd, w.exited, w.stdin, w.replies = cmd, exited, stdin, replies

	line, err := w.await(ctx)
	if err != nil {
		w.reap()
		if s := stderr.String(); strings.Contains(s, "No module named 'uno'") {
			return report.Errorf(report.Conversion,
				"PowerPoint conversion needs Python with UNO: install python3-uno")
		} else if s != "" {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(s))
		}
		return err
	}
	var r helperReply
	if json.Unmarshal([]byte(line), &r) != nil || !r.Ready {
		w.reap()
		return fmt.Errorf("LibreOffice helper did not start: %s", line)
	}
	w.pid.Store(int64(cmd.Process.Pid))
	// The helper names soffice by its PID inside the sandbox's namespace.
	soffice := engine.HostPID(cmd.Process.Pid, r.PID)
	if soffice == 0 {
		w.o.log.Warn("LibreOffice worker: soffice not found among its sandbox's processes; an idle crash shows only at the next job", "worker", w.id)
	}
	w.sofficePID.Store(int64(soffice))
	w.warmup()
	w.o.log.Debug("LibreOffice worker ready", "worker", w.id, "pid", cmd.Process.Pid)
	return nil
}

// warmup converts a tiny deck so the filters are loaded before a user waits.
func (w *officeWorker) warmup() {
	defer w.clearJob()
	in := filepath.Join(w.job, "warmup.pptx")
	if err := os.WriteFile(in, warmupPPTX, 0o600); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), officeStartTimeout)
	defer cancel()
	err := w.exchange(ctx, &officeJob{in: in, out: in + ".pdf", office: officeOf(report.PPTX)})
	if err != nil {
		w.o.log.Warn("LibreOffice warm-up failed", "worker", w.id, "err", err)
	}
}

// await returns the helper's next line, or an error when it exits or ctx ends.
func (w *officeWorker) await(ctx context.Context) (string, error) {
	select {
	case line, ok := <-w.replies:
		if !ok {
			return "", errors.New("LibreOffice helper exited")
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-w.o.quit:
		return "", errors.New("shutting down")
	}
}

// attempt runs j on the worker's process, started first if there is none
// (started is false, and err says why, when it cannot be).
func (w *officeWorker) attempt(j *officeJob) (err error, retry, started bool) {
	p, err := w.sup.Acquire()
	if err != nil {
		return engine.Fault(report.Wrap(report.Conversion, err, "LibreOffice could not start")), false, false
	}
	err, retry = w.run(j)
	w.sup.Release(p, err == nil, false) // the policy counts converted jobs
	return err, retry, true
}

// run converts j on this worker. retry reports a failure that was not the
// input's (a broken worker): the worker is gone, and the job may be tried
// once more on a fresh one (fault.go).
func (w *officeWorker) run(j *officeJob) (err error, retry bool) {
	timeout := w.o.cfg.JobTimeout
	ctx, cancel := context.WithTimeout(j.ctx, timeout)
	defer cancel()
	var staging bool
	err = w.staged(j, func(in, out string) error {
		return w.exchange(ctx, &officeJob{in: in, out: out, office: j.office})
	}, &staging)
	if err == nil {
		w.o.done.Add(1)
		return nil, false
	}
	return w.failed(ctx, err, staging, engine.FileSize(j.in))
}

// exchange sends one job and reads its answer. A *report.Error means the
// helper answered that the document could not be converted.
func (w *officeWorker) exchange(ctx context.Context, j *officeJob) error {
	b, _ := json.Marshal(map[string]any{"in": j.in, "out": j.out, "filter": j.office.Filter, "detect": j.office.Detect,
		"service": j.office.Service, "export": j.office.Export})
	if _, err := w.stdin.Write(append(b, '\n')); err != nil {
		return err
	}
	line, err := w.await(ctx)
	if err != nil {
		return err
	}
	var r helperReply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return fmt.Errorf("bad reply from LibreOffice helper: %q", line)
	}
	w.o.log.Debug("office convert", "worker", w.id, "load_ms", r.LoadMS, "store_ms", r.StoreMS)
	if r.Died {
		return &sofficeDied{status: r.Status, peak: r.Peak, msg: r.Error}
	}
	if !r.OK && r.Encrypted {
		return report.Wrap(report.Conversion, errors.New(r.Error), "the presentation is password-protected")
	}
	if !r.OK {
		return report.Wrap(report.Conversion, errors.New(r.Error),
			"LibreOffice could not read the presentation: it is damaged or not a PowerPoint file")
	}
	return nil
}

// crashed reports whether soffice died under the job that failed with err.
func crashed(err error) bool {
	var died *sofficeDied
	return errors.As(err, &died)
}

// sofficeDied: soffice exited during a job (status: the helper's view of
// its exit, 128+N or -N for signal N).
type sofficeDied struct {
	status int
	peak   int64
	msg    string
}

func (e *sofficeDied) Error() string {
	return fmt.Sprintf("soffice exited with status %d during the job (peak %d MiB): %s", e.status, e.peak>>20, e.msg)
}

// kill retires the worker's process for reason (fault.go): it is
// stopped (reap) as soon as the job at hand is released.
func (w *officeWorker) kill(reason string) { w.sup.RetireCurrent(reason, nil) }

// reap ends the helper and its soffice at once: by killing bwrap, whose
// PID namespace dies with it, or unsandboxed by process group.
func (w *officeWorker) reap() {
	if w.cmd == nil {
		return
	}
	engine.Reap(w.cmd.Process.Pid, w.exited, w.replies, "-env:UserInstallation=file://"+w.profile, officeKillWait, w.o.log.With("worker", w.id))
	w.clearJob()
	w.cmd, w.exited, w.stdin, w.replies = nil, nil, nil, nil
	w.pid.Store(0)
	w.sofficePID.Store(0)
}

// stop ends the worker's process without counting a restart.
func (w *officeWorker) stop() { w.sup.Close() }

// limitedWriter keeps the first n bytes, enough for an error message.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
