package config

import (
	"strings"
	"sync"
	"time"
)

// setting is one configuration key: its place in reportd.yaml, its default
// (written as in reportd.yaml), its REPORTD_* variable (see envName), an
// optional serve flag, a line of help, and the Config field it fills.
// Adding a key is one row here plus its field in Config.
type setting struct {
	key  string // reportd.yaml key; "section.key" inside a section
	def  string
	flag string // flag name of serve, backup, check and restore; "" for none
	help string
	kind kind
}

// settings lists every key of reportd.yaml, in the order of `reportd serve --help`.
var settings = []setting{
	{"addr", "127.0.0.1:8080", "addr", "listen address", nonEmpty(func(c *Config) *string { return &c.Addr })},
	{"data_dir", "./data", "data-dir", "data directory: reportd.db and uploads/", nonEmpty(func(c *Config) *string { return &c.DataDir })},
	{"storage", "", "", "shorthand for metadata_store and file_store: bolt (bolt, local), postgres (postgres, local) or postgres+s3 (postgres, s3); empty: those two keys decide", oneOfOrEmpty(func(c *Config) *string { return &c.Storage }, "bolt", "postgres", "postgres+s3")},
	{"metadata_store", "", "", "metadata store: bolt (reportd.db in data_dir) or postgres (postgres.dsn); empty: as storage says, else bolt", oneOfOrEmpty(func(c *Config) *string { return &c.MetadataStore }, "bolt", "postgres")},
	{"file_store", "", "", "file store of report files and covers: local (uploads/ in data_dir) or s3 (s3.*; needs metadata_store: postgres); empty: as storage says, else local", oneOfOrEmpty(func(c *Config) *string { return &c.FileStore }, "local", "s3")},
	{"postgres.dsn", "", "", "PostgreSQL URL or key=value DSN, with storage: postgres (never logged)", text(func(c *Config) *string { return &c.Postgres.DSN })},
	{"postgres.dsn_file", "", "", "file holding the DSN instead of postgres.dsn (for secrets)", text(func(c *Config) *string { return &c.Postgres.DSNFile })},
	{"s3.endpoint", "", "", "S3 server host[:port], with storage: postgres+s3", text(func(c *Config) *string { return &c.S3.Endpoint })},
	{"s3.bucket", "", "", "bucket of the report files and covers (must exist)", text(func(c *Config) *string { return &c.S3.Bucket })},
	{"s3.region", "us-east-1", "", "region the requests are signed for", text(func(c *Config) *string { return &c.S3.Region })},
	{"s3.prefix", "", "", "key prefix inside the bucket (e.g. reportd/); empty: none", text(func(c *Config) *string { return &c.S3.Prefix })},
	{"s3.tls", "true", "", "talk HTTPS to the S3 server", boolean(func(c *Config) *bool { return &c.S3.TLS })},
	{"s3.part_size", "16MiB", "", "multipart upload part size (at least 5MiB); each upload in flight buffers one part", size(func(c *Config) *ByteSize { return &c.S3.PartSize })},
	{"s3.access_key", "", "", "S3 access key (or AWS_ACCESS_KEY_ID)", text(func(c *Config) *string { return &c.S3.AccessKey })},
	{"s3.secret_key", "", "", "S3 secret key (or AWS_SECRET_ACCESS_KEY; never logged)", text(func(c *Config) *string { return &c.S3.SecretKey })},
	{"s3.secret_key_file", "", "", "file holding the secret key instead of s3.secret_key (for secrets)", text(func(c *Config) *string { return &c.S3.SecretKeyFile })},
	{"s3.presign_downloads", "false", "", "with storage: postgres+s3, GET /api/reports/{id}/download of a pdf, md, ppt or pptx report answers 302 to a presigned URL of its object (never html, never a site)", boolean(func(c *Config) *bool { return &c.S3.PresignDownloads })},
	{"s3.presign_ttl", "5m", "", "how long a presigned download URL is valid (1m to 12h)", duration(func(c *Config) *time.Duration { return &c.S3.PresignTTL })},
	{"sweep.interval", "1h", "", "with storage: postgres+s3, how often one replica sweeps the bucket (unreferenced objects, stale multipart uploads); 0: never", duration(func(c *Config) *time.Duration { return &c.Sweep.Interval })},
	{"sweep.grace", "1h", "", "the bucket sweep removes only objects and uploads older than this", duration(func(c *Config) *time.Duration { return &c.Sweep.Grace })},
	{"time_zone", "", "", "IANA zone of createdAt and todayNewReports; empty: local", zone(func(c *Config) *string { return &c.TimeZone })},
	{"max_upload_bytes", "2GiB", "", "largest report file accepted", size(func(c *Config) *ByteSize { return &c.MaxUploadBytes })},
	{"max_cover_bytes", "10MiB", "", "largest cover image accepted", size(func(c *Config) *ByteSize { return &c.MaxCoverBytes })},
	{"error_status", "spec", "", "error statuses: spec (always 500) or conventional", oneOf(func(c *Config) *string { return &c.ErrorStatus }, "spec", "conventional")},
	{"auth.token", "", "", "bearer token required for writes (and reads with auth.reads); at least 24 characters beyond loopback (openssl rand -base64 32)", text(func(c *Config) *string { return &c.Auth.Token })},
	{"auth.reads", "false", "", "require the token for GET/HEAD too", boolean(func(c *Config) *bool { return &c.Auth.Reads })},
	{"auth.anonymous", "false", "", "serve beyond loopback without a token, on purpose", boolean(func(c *Config) *bool { return &c.Auth.Anonymous })},
	{"public_url", "", "", "URL clients use; its host joins the Host allow-list", text(func(c *Config) *string { return &c.PublicURL })},
	{"allowed_hosts", "", "", "more Host names allowed (list; env: comma-separated); * allows any", words(func(c *Config) *[]string { return &c.AllowedHosts })},
	{"max_connections", "1024", "", "connections served at once on each listener (API, content origin); past it a new connection displaces one stalled on its client, else gets ServiceUnavailableError at once; 0: no cap", count(func(c *Config) *int { return &c.MaxConnections })},
	{"max_connections_per_client", "0", "", "most connections one client address may hold on each listener (behind trusted_proxies: requests in flight per X-Forwarded-For address); 0: no limit", count(func(c *Config) *int { return &c.MaxConnectionsPerClient })},
	{"trusted_proxies", "", "", "proxy addresses or CIDRs (list; env: comma-separated) whose X-Forwarded-For names the client for max_connections_per_client", words(func(c *Config) *[]string { return &c.TrustedProxies })},
	{"max_inline_content", "8MiB", "", "largest html/md text inlined in fileContent", size(func(c *Config) *ByteSize { return &c.MaxInlineContent })},
	{"upload_min_rate", "64KiB", "", "slowest request body accepted after the grace period (bytes/s); 0: none", size(func(c *Config) *ByteSize { return &c.UploadMinRate })},
	{"upload_rate_grace", "10s", "", "time before upload_min_rate applies", duration(func(c *Config) *time.Duration { return &c.UploadRateGrace })},
	{"upload_idle_timeout", "30s", "", "longest pause within a request body; 0: none", duration(func(c *Config) *time.Duration { return &c.UploadIdleTimeout })},
	{"download_min_rate", "32KiB", "", "slowest a client may read a response after the grace period (bytes/s); 0: none", size(func(c *Config) *ByteSize { return &c.DownloadMinRate })},
	{"download_rate_grace", "10s", "", "time from a response's first byte before download_min_rate applies", duration(func(c *Config) *time.Duration { return &c.DownloadRateGrace })},
	{"download_idle_timeout", "30s", "", "longest a response may wait for its client to read; 0: none", duration(func(c *Config) *time.Duration { return &c.DownloadIdleTimeout })},
	{"write_timeout", "5m", "", "longest time to send a response other than a file (JSON answers, errors, pages, badges, metrics) from its first byte; files are bounded by download_min_rate; 0: none", duration(func(c *Config) *time.Duration { return &c.WriteTimeout })},
	{"cover_fetch.timeout", "10s", "", "time limit of downloading a cover URL", duration(func(c *Config) *time.Duration { return &c.CoverFetch.Timeout })},
	{"cover_fetch.allow_private", "false", "", "allow cover URLs on loopback, private and link-local addresses", boolean(func(c *Config) *bool { return &c.CoverFetch.AllowPrivate })},
	{"html_allow_scripts", "false", "", "let uploaded HTML run scripts in its sandbox", boolean(func(c *Config) *bool { return &c.HTMLScripts })},
	{"convert_on_upload", "false", "", "convert each report to PDF right after upload", boolean(func(c *Config) *bool { return &c.ConvertOnUpload })},
	{"dashboard", "true", "", "serve the web dashboard at /", boolean(func(c *Config) *bool { return &c.Dashboard })},
	{"clients.dir", "/usr/share/reportd/clients", "", "folder of reportctl-<os>-<arch>[.exe] binaries and their checksums.txt, served at /dl/ with /dl/install.sh (the .deb fills the default; scripts/run.sh uses ./bin/clients); missing: /dl/ answers 404", text(func(c *Config) *string { return &c.Clients.Dir })},
	{"metrics.enabled", "true", "", "Prometheus metrics at GET /metrics", boolean(func(c *Config) *bool { return &c.Metrics.Enabled })},
	{"admin.enabled", "true", "", "GET /admin/backup for reportd backup", boolean(func(c *Config) *bool { return &c.Admin.Enabled })},
	{"badges.coverage_red", "50", "", "coverage badges below this percentage are red", percent(func(c *Config) *int { return &c.Badges.CoverageRed })},
	{"badges.coverage_yellow", "80", "", "coverage badges below this percentage (and not red) are yellow, others green", percent(func(c *Config) *int { return &c.Badges.CoverageYellow })},
	{"badges.max_age", "60s", "", "how long browsers and proxies may cache a badge", duration(func(c *Config) *time.Duration { return &c.Badges.MaxAge })},
	{"retention.keep_last", "0", "", "default retention: keep the newest N reports of each name and branch; 0: no limit", count(func(c *Config) *int { return &c.Retention.KeepLast })},
	{"retention.max_age", "0", "", "default retention: remove reports older than this (90d, 12w); 0: no limit", days(func(c *Config) *int { return &c.Retention.MaxAgeDays })},
	{"retention.keep_newest_per_branch", "true", "", "default retention: always keep the newest report of each name and branch", boolean(func(c *Config) *bool { return &c.Retention.KeepNewestPerBranch })},
	{"retention.interval", "1h", "", "how often the retention sweeper runs; 0: never (reportctl prune still works)", duration(func(c *Config) *time.Duration { return &c.Retention.Interval })},
	{"sites.max_entries", "100000", "", "most entries (files and folders) a site upload may hold", positive(func(c *Config) *int { return &c.Sites.MaxEntries })},
	{"sites.max_bytes", "2GiB", "", "most bytes a site's files may expand to", size(func(c *Config) *ByteSize { return &c.Sites.MaxBytes })},
	{"sites.max_ratio", "200", "", "most a site archive may expand relative to its size (compression bombs)", positive(func(c *Config) *int { return &c.Sites.MaxRatio })},
	{"sites.gc_grace", "24h", "", "site files no report references are removed once older than this; 0: at once", duration(func(c *Config) *time.Duration { return &c.Sites.GCGrace })},
	{"content.enabled", "true", "", "serve report sites and HTML reports, scripts running, on the content origin (a second listener)", boolean(func(c *Config) *bool { return &c.Content.Enabled })},
	{"content.addr", "127.0.0.1:8081", "", "listen address of the content origin", nonEmpty(func(c *Config) *string { return &c.Content.Addr })},
	{"content.url", "", "", "origin of a report: a template with {id} in the host (one origin per report, e.g. https://{id}.reports-content.example.com), or without {id} one origin shared by all reports below /r/{id}/; empty: http://{id}.localhost:<port> on loopback, the shared origin on the listener's host beyond it", text(func(c *Config) *string { return &c.Content.URL })},
	{"content.url_ttl", "1h", "", "how long a signed content URL is valid (links are signed only while reads need a token: auth.reads)", duration(func(c *Config) *time.Duration { return &c.Content.URLTTL })},
	{"content.signing_key", "", "", "secret content URLs are signed with (never logged); empty: a random key the store makes once and keeps (shared by replicas on PostgreSQL), never auth.token", text(func(c *Config) *string { return &c.Content.SigningKey })},
	{"content.session_ttl", "12h", "", "how long the cookie a signed content URL is exchanged for lives", duration(func(c *Config) *time.Duration { return &c.Content.SessionTTL })},
	{"read_header_timeout", "10s", "", "cut off clients slower than this to send headers", duration(func(c *Config) *time.Duration { return &c.HeaderTimeout })},
	{"idle_timeout", "2m", "", "close idle keep-alive connections after this", duration(func(c *Config) *time.Duration { return &c.IdleTimeout })},
	{"startup_wait", "2m", "", "at start, wait this long for PostgreSQL and the S3 bucket to answer (retrying with backoff, logged) before giving up; a wrong password, key or bucket fails at once; 0: do not wait", duration(func(c *Config) *time.Duration { return &c.StartupWait })},
	{"shutdown_timeout", "25s", "", "on SIGTERM, let requests in flight finish for this long", duration(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
	{"log.level", "info", "", "debug, info, warn or error", oneOf(func(c *Config) *string { return &c.Log.Level }, "debug", "info", "warn", "error")},
	{"log.format", "text", "", "text or json", oneOf(func(c *Config) *string { return &c.Log.Format }, "text", "json")},
	{"convert.warm_on_start", "true", "", "start the PDF engines at start-up (false: on the first conversion)", boolean(func(c *Config) *bool { return &c.Convert.WarmOnStart })},
	{"convert.paper", "A4", "", "default paper size: A4 or Letter", oneOf(func(c *Config) *string { return &c.Convert.Paper }, "A4", "Letter")},
	{"convert.allow_network", "false", "", "let HTML fetch from other hosts while printing", boolean(func(c *Config) *bool { return &c.Convert.AllowNetwork })},
	{"convert.script_wait", "1s", "", "wait at most this long for scripts after load", duration(func(c *Config) *time.Duration { return &c.Convert.ScriptWait })},
	{"convert.chromium_path", "", "", "Chromium binary; empty: chromium-headless-shell, then chromium", text(func(c *Config) *string { return &c.Convert.ChromiumPath })},
	{"convert.soffice_path", "soffice", "", "LibreOffice binary", text(func(c *Config) *string { return &c.Convert.SofficePath })},
	{"convert.python_path", "/usr/bin/python3", "", "python3 with the uno module", text(func(c *Config) *string { return &c.Convert.PythonPath })},
	{"convert.bwrap_path", "bwrap", "", "bubblewrap, the sandbox every engine process runs in", text(func(c *Config) *string { return &c.Convert.BwrapPath })},
	{"convert.unsandboxed", "false", "", "where the sandbox cannot run, run engines without it instead of refusing", boolean(func(c *Config) *bool { return &c.Convert.Unsandboxed })},
	{"convert.office_workers", "0", "", "LibreOffice workers; 0: one per two cores", count(func(c *Config) *int { return &c.Convert.OfficeWorkers })},
	{"convert.chromium_tabs", "0", "", "Chromium pages printing at once (each job a fresh one); 0: max(2, cores)", count(func(c *Config) *int { return &c.Convert.ChromiumTabs })},
	{"convert.chromium_spares", "0", "", "Chromium pages made ahead of jobs, each a fresh browser context; beyond chromium_tabs they are made only while nothing prints; 0: up to 24 as memory allows (~16 MiB each)", count(func(c *Config) *int { return &c.Convert.ChromiumSpares })},
	{"convert.job_timeout", "60s", "", "time limit of one conversion", duration(func(c *Config) *time.Duration { return &c.Convert.JobTimeout })},
	{"convert.max_jobs_per_worker", "200", "", "recycle an engine process after this many jobs", count(func(c *Config) *int { return &c.Convert.MaxJobsPerWorker })},
	{"convert.max_worker_rss", "1GiB", "", "recycle an engine process above this memory; a job's Chromium renderer above it is stopped, failing the job", size64(func(c *Config) *int64 { return &c.Convert.MaxWorkerRSS })},
	{"convert.queue_size", "32", "", "jobs that may wait per engine", count(func(c *Config) *int { return &c.Convert.QueueSize })},
	{"convert.cache_max_bytes", "1GiB", "", "size cap of the PDF cache", size64(func(c *Config) *int64 { return &c.Convert.CacheMaxBytes })},
	{"convert.max_variants_per_report", "8", "", "cached PDFs with print options per report, least recently used evicted first (never the default print); 0: no cap", orNone[int](count(func(c *Config) *int { return &c.Convert.MaxVariantsPerReport }))},
	{"convert.site_timeout", "3m", "", "GET /pdf?scope=site: engine time of a whole site walk, its pages together (each page also has convert.job_timeout)", duration(func(c *Config) *time.Duration { return &c.Convert.SiteTimeout })},
	{"convert.site_max_pages", "200", "", "GET /pdf?scope=site prints at most this many pages of a site (in link order from the entry); 0: 200", count(func(c *Config) *int { return &c.Convert.SiteMaxPages })},
	{"convert.deck_max_bytes", "512MiB", "", "largest total a .pptx may expand to", size64(func(c *Config) *int64 { return &c.Convert.DeckMaxBytes })},
	{"convert.small_deck_bytes", "1MiB", "", "decks up to this size convert on a worker of their own, never behind a long deck; 0: no such lane", orNone[int64](size64(func(c *Config) *int64 { return &c.Convert.SmallDeckBytes }))},
	{"convert.failure_ttl", "2m", "", "answer a failed conversion from memory this long; 0s: never", orNone[time.Duration](duration(func(c *Config) *time.Duration { return &c.Convert.FailureTTL }))},
}

const envPrefix = "REPORTD_"

// envName is a key's environment variable: auth.token -> REPORTD_AUTH_TOKEN.
func envName(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// notSettings are REPORTD_* variables that are not keys, so they are never
// reported as unknown: REPORTD_CONFIG chooses the file, cobra reads
// REPORTD_ACTIVE_HELP for shell completion, and the crash test reads
// REPORTD_CRASH_KEEP in the test process.
var notSettings = []string{"REPORTD_CONFIG", "REPORTD_ACTIVE_HELP", "REPORTD_CRASH_KEEP"}

// DefaultConfig is every setting at its default.
func DefaultConfig() Config { return defaultConfig() }

var defaultConfig = sync.OnceValue(func() Config {
	var c Config
	for _, s := range settings {
		if err := s.kind.set(&c, s.def); err != nil {
			panic("reportd: default of " + s.key + ": " + err.Error()) // TestSettingsDefaults catches it first
		}
	}
	return c
})

// lookup finds the setting of key.
func lookup(key string) (setting, bool) {
	for _, s := range settings {
		if s.key == key {
			return s, true
		}
	}
	return setting{}, false
}

// isSection says whether name is a section of keys (auth, convert, ...).
func isSection(name string) bool {
	for _, s := range settings {
		if strings.HasPrefix(s.key, name+".") {
			return true
		}
	}
	return false
}

// sectionKeys are the keys of a section, for messages.
func sectionKeys(name string) []string {
	var out []string
	for _, s := range settings {
		if strings.HasPrefix(s.key, name+".") {
			out = append(out, s.key)
		}
	}
	return out
}
