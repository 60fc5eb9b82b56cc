package chromium

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// disabledFeatures: a print farm never goes back (no back-forward cache),
// and a page's one navigation needs no new browsing instance.
const disabledFeatures = "Translate,BlinkGenPropertyTrees,BackForwardCache," +
	"ProactivelySwapBrowsingInstance,RenderDocument,MediaRouter,OptimizationHints"

// browser is one Chromium process tree (under its bwrap when sandboxed),
// run by the chromium's supervisor (engine/supervisor.go).
type browser struct {
	engine.ProcState
	ctx    context.Context // the browser's root chromedp context
	cancel func()          // kills the browser and removes its profile
	pid    int             // the process chromedp started: bwrap, or Chromium unsandboxed
}

func (b *browser) RootPID() int { return b.pid }

func (b *browser) Exited() bool { return b.ctx.Err() != nil }

// newBrowserSupervisor runs c's browsers: replaced after MaxJobsPerWorker
// jobs or over MaxWorkerRSS (measured every 8th job, after a large one and
// once idle, memcheck.go; and during jobs, engine/memcap.go), the successor started
// in the background ahead of the next job.
func (c *chromium) newBrowserSupervisor() *engine.Supervisor[*browser] {
	return &engine.Supervisor[*browser]{
		Name:   "Chromium",
		Engine: "chromium",
		Policy: engine.RecyclePolicy{
			MaxJobs:      c.cfg.MaxJobsPerWorker,
			MaxRSS:       c.cfg.MaxWorkerRSS,
			MeasureEvery: 8,
			IdleAfter:    idleCheckAfter,
		},
		Launch:   c.launch,
		Stop:     c.shutdown,
		Replaced: c.warm,
		Log:      c.log,
		Met:      c.met,
		Restarts: &c.restarts,
		MemCap:   engine.NewRendererSampler(c.cfg.MaxWorkerRSS, c.log),
		OverMem:  engine.OverMemory,
		// The tree holds every spare and frozen page: measuring it takes
		// longer than a job's print.
		MeasureAsync: true,
	}
}

// browserFor returns the current browser, starting one if there is none or
// the last one died. It counts the caller as in flight; release undoes that.
func (c *chromium) browserFor() (*browser, error) { return c.sup.Acquire() }

// launchOptions are Chromium's flags; profile is its user data directory.
func (c *chromium) launchOptions(profile string) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(c.path),
		// Chromium's own sandbox needs privileges it does not get inside
		// bubblewrap (which is the sandbox here), and refuses to run as root.
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("font-render-hinting", "none"),
		// window.open and target=_blank open nothing: a page cannot keep a
		// window of its own, nor get a handle on another.
		chromedp.Flag("block-new-web-contents", true),
		// WebRTC's STUN/TURN traffic is UDP that no request interception
		// sees: allow no UDP that does not go through the (absent) proxy.
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("disable-features", disabledFeatures),
		chromedp.UserDataDir(profile),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.Path, cmd.Args = c.box.Command(engine.Jail{
				Argv:    cmd.Args,
				RW:      []string{profile},
				Env:     engine.EngineEnv(profile),
				Network: c.cfg.AllowNetwork,
			})
			// Its own group, so a kill reaches it and, unsandboxed, its
			// helpers; and die with reportd. chromedp starts the browser
			// from a goroutine locked to its thread, so the death signal
			// follows the daemon, not a thread the Go runtime retires.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		}),
	)
	if mib := engine.V8HeapMiB(c.cfg.MaxWorkerRSS); mib > 0 {
		// Each V8 heap (the page's, each worker's) stops at half the
		// memory limit; the renderer as a whole is watched during jobs
		// (engine/memcap.go).
		opts = append(opts, chromedp.Flag("js-flags", fmt.Sprintf("--max-old-space-size=%d", mib)))
	}
	if engine.ShmLarge() {
		// chromedp's defaults move shared memory to /tmp for containers
		// whose /dev/shm is tiny; where it is big, memory beats a disk.
		opts = append(opts, chromedp.Flag("disable-dev-shm-usage", false))
	}
	if c.cfg.AllowNetwork {
		// The document's origin is a made-up public host; Chromium's Private
		// Network Access checks would then refuse intranet and loopback
		// addresses, which is where an intranet report's assets live.
		opts = append(opts, chromedp.Flag("disable-features", disabledFeatures+
			",BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,"+
			"PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks"))
	} else {
		// Belt and braces beside the request interception and the empty
		// network namespace: WebSockets are not seen by the Fetch domain,
		// so send everything to a dead proxy.
		opts = append(opts,
			chromedp.ProxyServer("http://127.0.0.1:9"),
			chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	}
	return opts
}

func (c *chromium) launch() (*browser, error) {
	// A fresh profile per browser, under the manager's work directory, so a
	// killed daemon leaves nothing behind that the next start does not sweep.
	profile := filepath.Join(c.workDir, fmt.Sprintf("chromium-%d", c.launches.Add(1)))
	if err := os.MkdirAll(profile, 0o700); err != nil {
		return nil, engine.Fault(report.Wrap(report.Conversion, err, "Chromium could not start"))
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), c.launchOptions(profile)...)
	bctx, bcancel := chromedp.NewContext(actx)
	err := withDeadline(browserStartTimeout, bcancel, func() error { return chromedp.Do(bctx) })
	if err != nil {
		bcancel()
		acancel()
		os.RemoveAll(profile)
		return nil, engine.Fault(report.Wrap(report.Conversion, err, "Chromium could not start"))
	}
	b := &browser{ctx: bctx}
	if p := chromedp.FromContext(bctx).Browser.Process(); p != nil {
		b.pid = p.Pid
	}
	b.cancel = func() {
		// Kill first: a graceful close waits on the browser, which may be
		// the thing that hangs. Killing bwrap kills the PID namespace and
		// so every process of the browser. The profile is throwaway anyway.
		engine.KillTree(b.pid)
		engine.KillByArg("--user-data-dir=" + profile) // a process forked during the kill
		bcancel()
		acancel()
		os.RemoveAll(profile)
	}
	c.log.Debug("Chromium ready", "pid", b.pid, "path", c.path, "sandboxed", c.box.Path() != "")
	return b, nil
}

// retire stops handing out b, counting a restart for reason; b shuts down
// once its last job ends. It reports false when b was retired already.
func (c *chromium) retire(b *browser, reason string, err error) bool {
	return c.sup.Retire(b, reason, err)
}

// shutdown kills b: in the background, or at once while closing (close
// waits for it right here).
func (c *chromium) shutdown(b *browser) {
	c.quitMu.Lock()
	defer c.quitMu.Unlock()
	select {
	case <-c.quit:
		b.cancel()
		return
	default:
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		b.cancel()
	}()
}

// release ends a use of b, and retires b after too many jobs or too much
// memory (the supervisor's policy). A replacement starts in the background,
// ahead of the next job. large says the job's input or output was large
// (see memcheck.go).
func (c *chromium) release(b *browser, job, large bool) {
	if job {
		c.jobEnd.Store(time.Now().UnixNano())
	}
	c.sup.Release(b, job, large)
}
