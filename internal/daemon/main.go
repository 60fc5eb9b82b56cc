// Package daemon wires reportd: the serve lifecycle (stores, engines,
// service, HTTP listeners, content origin) and what the operator commands
// of cmd/reportd/commands run (backup, restore, check, migrate, tokens).
// Configuration is internal/config.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/bucketsweep"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/content"
	"github.com/reportd/reportd/internal/convert"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/idempotency"
	"github.com/reportd/reportd/internal/metrics"
	"github.com/reportd/reportd/internal/netguard"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
	"github.com/reportd/reportd/internal/tokens"
	"github.com/reportd/reportd/internal/version"
	"github.com/reportd/reportd/internal/web"
)

// Server is one running daemon: store, files, engines and listener. Tests
// start it on 127.0.0.1:0 with a temp data directory.
type Server struct {
	Config config.Config
	Log    *slog.Logger
	Hooks  Hooks

	// store is the metadata store metadata_store names (stores.go).
	store report.Maintainer
	files *files.Dir
	// blobs is the file store file_store names (stores.go): files'
	// uploads/ or the bucket.
	blobs blob.Store
	svc   *service.Service
	conv  *convert.Manager
	// tokens are the scoped API tokens, loaded from the store.
	tokens *tokens.Set
	// adminKey authorises /admin/backup for whoever can read the data
	// directory's serve file (the daemon's user, root), token or not.
	adminKey string
	http     *http.Server
	ln       net.Listener
	// content serves report sites on contentLn (nil: content origin off);
	// origins makes their URLs.
	content   *http.Server
	contentLn net.Listener
	origins   *content.Origins
	// apiGuard and contentGuard cap and pace the two listeners' connections.
	apiGuard, contentGuard *netguard.Guard

	retention *retentionMetrics
	// ready checks the dependencies for /readyz and reportd_dependency_up.
	ready *readiness
	// bucketSweep cleans the bucket of storage: postgres+s3 (nil otherwise).
	bucketSweep *bucketsweep.Sweeper
	// presign signs download redirects (storage: postgres+s3 with
	// s3.presign_downloads; nil otherwise).
	presign func(ctx context.Context, rec report.ReportRecord, disposition, contentType string) (string, bool, error)

	// SweepSteps are more steps of each bucket sweep pass (storage:
	// postgres+s3), run under its lock: the GC of site objects (cas/,
	// sites/). Set before Open.
	SweepSteps []bucketsweep.Step

	// Metrics is the daemon's one Prometheus registry (nil until Open);
	// engines register their collectors on Metrics.Registry.
	Metrics *metrics.Metrics
}

// Open opens the store, sweeps what no row refers to, and binds the
// listener; after Open the daemon is ready to serve.
func (m *Server) Open(ctx context.Context) error {
	if m.Log == nil {
		m.Log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(m.Config.DataDir)
	if err != nil {
		return err
	}
	m.Config.DataDir = abs // engines and the cache are handed paths
	c := m.Config
	if err := c.ValidateStorage(); err != nil {
		return err
	}
	loc, err := c.Location()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
		return err
	}
	if m.files, err = files.Open(c.DataDir); err != nil {
		return err
	}
	m.Metrics = metrics.New()
	m.retention = newRetentionMetrics(m.Metrics.Registry)
	var conv service.Converter // nil: PDFs pass through, nothing converts
	if !m.Hooks.NoEngines {
		if m.conv, err = newEngines(c, m.Metrics.Registry, m.Log); err != nil {
			return err
		}
		conv = m.conv
	}
	clock := report.Clock{Location: loc}
	sc := m.serviceConfig(&c, clock)
	meta, bucket, err := m.openStores(ctx, c, clock, &sc)
	if err != nil {
		return err
	}
	if m.Hooks.Service != nil {
		m.Hooks.Service(&sc)
	}
	ts, _ := m.store.(tokens.Store) // both stores keep them (storetest.Tokens)
	if m.tokens, err = tokens.Load(ts); err != nil {
		return fmt.Errorf("load tokens: %w", err)
	}
	m.svc = service.New(sc, m.store, m.files, conv)
	removed, err := m.svc.Sweep(ctx)
	if err != nil {
		return fmt.Errorf("start-up sweep: %w", err)
	}
	if len(removed) > 0 {
		m.Log.Info("start-up sweep removed unreferenced files", "count", len(removed))
	}
	dbPath := "" // no store file: reportd_store_db_bytes is left out
	if meta.file != "" {
		dbPath = filepath.Join(c.DataDir, meta.file)
	}
	m.Metrics.Registry.MustRegister(metrics.NewStoreSize(dbPath, filepath.Join(c.DataDir, "uploads")))
	var passed net.Listener // the content origin's socket from systemd
	if m.ln, passed, err = listen(c.Addr, m.Log); err != nil {
		return err
	}
	if err := checkExposure(c, m.ln.Addr(), m.Log, m.tokens.Enabled()); err != nil {
		if passed != nil {
			passed.Close()
		}
		return err
	}
	notePublicURL(c, m.ln.Addr(), m.Log)
	if err := m.openContent(m.ln.Addr(), passed); err != nil {
		return err
	}
	hc, err := m.httpConfig(&c)
	if err != nil {
		return err
	}
	m.ready = newReadiness(m.Metrics.Registry, m.Log, m.dependencies(bucket))
	hc.Health = httpapi.Health{Live: m.live, Ready: m.ready.current}
	if m.Hooks.HTTP != nil {
		m.Hooks.HTTP(&hc)
	}
	api := httpapi.New(hc, m.svc, m.Log)
	var handler http.Handler = api
	if c.Admin.Enabled {
		m.adminKey = newAdminKey()
		backup, _ := m.store.(*boltstore.Store) // backup: bbolt only
		admin := &adminHandler{api: api, store: backup, meta: m.store, files: m.files, token: c.Auth.Token, key: m.adminKey, log: m.Log,
			tokens: m.tokens, keepOneToken: !loopbackOnly(m.ln.Addr()) && c.Auth.Token == "" && !c.Auth.Anonymous}
		handler = withAdmin(handler, api.HostGuard(admin))
	}
	m.http, m.apiGuard = m.newHTTPServer(handler, "api")
	m.Metrics.Registry.MustRegister(guardCollector{map[string]*netguard.Guard{"api": m.apiGuard, "content": m.contentGuard}})
	if err := writeServeInfo(c.DataDir, m.ln, m.adminKey); err != nil {
		m.Log.Warn("cannot record the listen address for reportd backup", "err", err)
	}
	return nil
}

// httpConfig is the API's configuration from c, for the bound listener,
// the stores and the content origin Open set up.
func (m *Server) httpConfig(c *config.Config) (httpapi.Config, error) {
	hc := httpapi.Config{
		ErrorStatus:      httpapi.StatusMode(c.ErrorStatus),
		AuthToken:        c.Auth.Token,
		AuthReads:        c.Auth.Reads,
		Tokens:           m.tokens,
		HTMLAllowScripts: c.HTMLScripts,
		AllowedHosts:     allowedHosts(c, m.ln.Addr()),
		PublicURL:        c.PublicURL,
		ClientsDir:       c.Clients.Dir,
		Pace:             pace(c),
		Badges:           badgesHTTP(c.Badges),
	}
	idem, _ := m.store.(idempotency.Store) // both stores keep them (storetest.Idempotency)
	hc.Idempotency = &idempotency.Keys{Store: idem}
	if m.origins != nil {
		hc.ContentURL = m.origins.URL
		hc.ReportHost = m.origins.ReportHost
	}
	hc.PresignDownload = m.presign
	if c.Dashboard {
		// The dashboard frames reports from the content origin(s).
		var frames []string
		if m.origins != nil {
			src, err := web.FrameSource(m.origins.Template())
			if err != nil {
				return hc, fmt.Errorf("content.url: %w", err)
			}
			frames = []string{src}
		}
		hc.Dashboard = web.New(web.Options{FrameSources: frames})
	}
	if c.Metrics.Enabled {
		hc.Metrics, hc.Observer = m.Metrics.Handler(), m.Metrics
	}
	return hc, nil
}

// serviceConfig is the service's configuration from c.
func (m *Server) serviceConfig(c *config.Config, clock report.Clock) service.Config {
	return service.Config{
		Version:               version.String(),
		MaxUploadBytes:        int64(c.MaxUploadBytes),
		MaxCoverBytes:         int64(c.MaxCoverBytes),
		MaxInlineContent:      int64(c.MaxInlineContent),
		CoverFetchTimeout:     c.CoverFetch.Timeout,
		AllowPrivateCoverURLs: c.CoverFetch.AllowPrivate,
		ConvertOnUpload:       c.ConvertOnUpload,
		Clock:                 clock,
		Logger:                m.Log,
		Retention:             retentionPolicy(c),
		OnPrune:               m.retention.observe,
		OnSiteIngest:          siteIngestMetrics(m.Metrics.Registry),
		Sites: service.SiteLimits{MaxEntries: c.Sites.MaxEntries, MaxBytes: int64(c.Sites.MaxBytes),
			MaxRatio: c.Sites.MaxRatio, GCGrace: c.Sites.GCGrace},
	}
}

// openStores opens the metadata store and the file store c names (the
// registry, stores.go), waiting within startup_wait for those that may
// still be starting (PostgreSQL, the bucket). With a bucket, the shared
// PDF cache, presigned downloads and the bucket sweep are set up, and sc
// is told of them.
func (m *Server) openStores(ctx context.Context, c config.Config, clock report.Clock, sc *service.Config) (meta metaBackend, bucket *s3store.Store, err error) {
	// PostgreSQL and the bucket may still be starting (a host booting, a
	// database failing over): wait for them, within startup_wait.
	until := time.Now().Add(c.StartupWait)
	meta = metaBackendOf(&c) // the storage registry (stores.go)
	openMeta := func() error {
		st, err := meta.open(ctx, c, clock, forServe)
		if err == nil {
			m.store = st // never a typed nil: Close checks m.store
			if l, ok := st.(interface{ SetLogger(*slog.Logger) }); ok {
				l.SetLogger(m.Log) // bbolt: a write's panic, with its stack
			}
		}
		return err
	}
	if meta.shared {
		err = m.waitFor(ctx, until, "PostgreSQL", openMeta)
	} else {
		err = openMeta()
	}
	if err != nil {
		return meta, nil, err
	}
	if c.OnS3() {
		if err := m.waitFor(ctx, until, "the S3 bucket", func() (err error) {
			m.blobs, err = fileBackendOf(&c).open(ctx, c, m.files)
			bucket, _ = m.blobs.(*s3store.Store)
			return err
		}); err != nil {
			return meta, nil, err
		}
		st := bucket
		if c.S3.PresignDownloads {
			m.presign = presignDownloads(st, c)
		}
		// PDFs are shared in the bucket; one replica converts each.
		sc.Blobs, sc.Locker = st, m.store.(service.Locker)
		sc.OnSharedPDF = sharedPDFMetrics(m.Metrics.Registry)
		if err := m.openBucketSweep(st, append(slices.Clip(m.SweepSteps), m.sweepSites)); err != nil {
			return meta, nil, err
		}
	}
	if m.blobs == nil {
		if m.blobs, err = fileBackendOf(&c).open(ctx, c, m.files); err != nil {
			return meta, nil, err
		}
	}
	return meta, bucket, nil
}

// Addr is the bound address (useful with port 0).
func (m *Server) Addr() string { return m.ln.Addr().String() }

// Run serves until ctx is done, then stops accepting and lets requests in
// flight finish within ShutdownTimeout. Under systemd it reports READY=1
// (the store is open and the listener bound: connections queue in the
// kernel until Serve accepts them), pings the watchdog, and reports
// STOPPING=1 when the shutdown begins.
func (m *Server) Run(ctx context.Context) error {
	errc := make(chan error, 2) // the API and the content origin
	go func() { errc <- m.http.Serve(m.apiGuard.Listener(m.ln)) }()
	if m.content != nil {
		go func() { errc <- m.content.Serve(m.contentGuard.Listener(m.contentLn)) }()
	}
	if m.Config.Convert.WarmOnStart && m.conv != nil {
		m.conv.Start(ctx) // warms Chromium and LibreOffice in the background
	}
	attrs := []any{"addr", m.Addr(), "data_dir", m.Config.DataDir, "storage", m.Config.StorageName(), "version", version.String()}
	if u := openURL(m.ln.Addr(), m.Config.PublicURL); u != "" && m.Config.Dashboard {
		attrs = append(attrs, "dashboard", u)
	} else if u != "" {
		attrs = append(attrs, "url", u)
	}
	if m.origins != nil {
		attrs = append(attrs, "content_addr", m.ContentAddr(), "content_url", m.origins.Template())
	}
	m.Log.Info("reportd serving", attrs...)
	notify(m.Log, sd.SdNotifyReady)
	wctx, stopWatchdog := context.WithCancel(ctx)
	defer stopWatchdog()
	go m.watchdog(wctx)
	go func() { m.ready.check(wctx); m.ready.run(wctx) }()
	// The sweeper stops with ctx; a pass in progress ends after the report
	// it is deleting, and Run waits for it before returning.
	swept := make(chan struct{})
	sctxSweep, stopSweep := context.WithCancel(ctx)
	if iv := m.Config.Retention.Interval; iv > 0 {
		go func() { defer close(swept); m.sweep(sctxSweep, iv) }()
	} else {
		close(swept)
	}
	defer func() { stopSweep(); <-swept }()
	bucketSwept := make(chan struct{})
	go func() { defer close(bucketSwept); m.runBucketSweep(sctxSweep) }()
	defer func() { stopSweep(); <-bucketSwept }()
	if metaBackendOf(&m.Config).shared {
		// Replicas and `reportd token` share the tokens table: re-read it.
		go m.reloadTokens(wctx, tokenReloadInterval)
	}
	select {
	case err := <-errc:
		notify(m.Log, sd.SdNotifyStopping)
		return err
	case <-ctx.Done():
	}
	notify(m.Log, sd.SdNotifyStopping)
	m.Log.Info("shutting down", "deadline", m.Config.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
	defer cancel()
	servers := []*http.Server{m.http}
	if m.content != nil {
		servers = append(servers, m.content)
	}
	// Both listeners drain at once, within the one deadline.
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Go(func() {
			if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
				m.Log.Warn("shutdown deadline passed; closing connections", "err", err)
				srv.Close()
			}
		})
	}
	wg.Wait()
	return nil
}

// Close releases the store and files; call after Run returns.
func (m *Server) Close() error {
	var errs []error
	if m.ln != nil {
		m.ln.Close() // already closed by Shutdown after Run; harmless then
	}
	if m.contentLn != nil {
		m.contentLn.Close()
	}
	if m.svc != nil {
		errs = append(errs, m.svc.Close()) // background conversions, before the engines
	}
	if m.conv != nil {
		// After the HTTP drain: conversions in flight have finished or timed out.
		errs = append(errs, m.conv.Close())
	}
	if m.store != nil {
		removeServeInfo(m.Config.DataDir)
		errs = append(errs, m.store.Close())
	}
	if m.files != nil {
		errs = append(errs, m.files.Close())
	}
	return errors.Join(errs...)
}

// NewLogger is the logger log.level and log.format ask for, on stderr.
func NewLogger(c config.Config) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Log.Level)); err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.Log.Format {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("log.format must be text or json, not %q", c.Log.Format)
}
