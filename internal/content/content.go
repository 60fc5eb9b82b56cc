// Package content is reportd's content origin: the second listener where
// report sites (and single-file HTML reports) are served with their
// scripts running, never on the API/dashboard origin.
//
// # Origins
//
// Config.URL is a template of a report's origin. With {id} in its host
// (default http://{id}.localhost:8081) every report is an origin of its
// own, so one report's scripts cannot read another's localStorage,
// cookies or service workers, nor the dashboard's. Without {id} every
// report shares that one origin below /r/{id}/ (the fallback for hosts
// without wildcard DNS): reports are then not isolated from each other,
// only from the dashboard. Requests for any other host are answered 404.
//
// # Responses
//
// No sandbox CSP (scripts, localStorage, fetch of the site's own files and
// service workers work); Content-Security-Policy: frame-ancestors limits
// who may frame a report to the dashboard's origins and the report itself;
// nosniff; Referrer-Policy: no-referrer; Cross-Origin-Resource-Policy:
// same-origin (no other origin, other reports included, may embed a
// report's files as images or scripts; the dashboard's iframe is a
// navigation, which CORP does not govern). Content-Type comes from the
// manifest (site.ContentType's built-in table). A file's ETag is its
// sha256, a precompressed variant's the sha256 with .br or .gzip appended
// (variants are looked up by the file's sha256 and cached); files are
// immutable per report id, so they are cached for a year (private when
// access is controlled). Range requests are served from the identity
// bytes.
//
// Small files (up to Config.CacheObjectMax, default 128 KiB; identity
// bytes and variants alike) are kept in memory by content key, least
// recently used first out, at most Config.CacheBytes (default 32 MiB)
// with a fixed per-entry charge: an object never changes under its key,
// and the manifest and access checks run on every request before the
// cache is asked. A plain GET or HEAD of a cached file is answered with
// header values made once; ranges and conditional requests go through
// http.ServeContent over the cached bytes, so every answer is the same as
// from storage.
//
// # Access control
//
// When Config.Protected says so (reads need a token: auth.reads with
// auth.token or scoped tokens; never merely because a token exists),
// Origins.URL hands out signed, expiring links:
// ?reportd_sig=<HMAC-SHA256(key, "id|exp")>&reportd_exp=<unix seconds>,
// the key derived with HKDF from Config.Secret so every replica agrees.
// The first request with a valid signature gets a host-only HttpOnly
// cookie for that report (Path=/, or /r/{id}/ on the shared origin) and a
// 302 to the same URL without the signature, so relative links keep
// working. Without a valid signature or cookie: 401 (none) or 403 (bad,
// expired, another report's).
package content

import (
	"context"
	"log/slog"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/site"
)

// Sites is what the content origin serves from; *service.Service
// implements it.
type Sites interface {
	// SiteManifest is the manifest served for report id: a site's, or a
	// one-file manifest for a single-file HTML report; report.NotFound
	// for anything else.
	SiteManifest(ctx context.Context, id int64) (site.Manifest, error)
	// OpenSiteFile opens one file of that manifest, or with f.Encoding
	// set its precompressed variant (site.VariantKey).
	OpenSiteFile(ctx context.Context, id int64, f site.File) (blob.Object, error)
	// SiteVariants tells which precompressed variants of f (a file of
	// report id's manifest that site.Wants) exist, and queues them if
	// they are not made yet.
	SiteVariants(ctx context.Context, id int64, f site.File) (site.Variants, error)
}

// Defaults of Config.
const (
	DefaultURL        = "http://{id}.localhost:8081"
	DefaultURLTTL     = time.Hour
	DefaultSessionTTL = 12 * time.Hour
	// DefaultManifestTTL is how long a loaded manifest is reused: a
	// deleted report disappears from the content origin within it.
	DefaultManifestTTL = 10 * time.Second
)

// Config configures the content origin.
type Config struct {
	// URL is the origin template: {id} in the host for one origin per
	// report, or a fixed origin for the shared /r/{id}/ fallback.
	URL string
	// ExtraHosts are more Host names answered on the shared origin (e.g.
	// the listen IP when the fallback was chosen automatically).
	ExtraHosts []string
	// FrameAncestors are the origins allowed to frame reports (the
	// dashboard's); 'self' is always allowed.
	FrameAncestors []string
	// Secret is what the signing keys are derived from (content.signing_key,
	// or the key the store keeps: KeyStore); "" with Protected: nothing can
	// be signed, every request is refused.
	Secret string
	// APIURL is where the API is ({site_url}: public_url, else the API
	// listener's address), named to a client that sent an API request
	// here (reportctl --server pointed at the content origin).
	APIURL string
	// Legacy are secrets that signed links before Secret did (an earlier
	// release derived them from auth.token or data_dir/content.key): links
	// and cookies they signed are still accepted until LegacyUntil, never
	// after; nothing new is signed with them.
	Legacy      []string
	LegacyUntil time.Time
	// Protected tells whether access is controlled now (nil: never).
	Protected func() bool
	// URLTTL is how long a signed URL is valid (default 1h); SessionTTL
	// how long the cookie it is exchanged for lives (default 12h).
	URLTTL, SessionTTL time.Duration
	// ManifestTTL bounds how long a manifest is reused (default 10s).
	ManifestTTL time.Duration
	// CacheBytes caps the memory of the cache of small files (default
	// DefaultCacheBytes; negative: no cache); CacheObjectMax is the
	// largest file kept there (default DefaultCacheObjectMax).
	CacheBytes, CacheObjectMax int64
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log hears about storage failures (default: discard).
	Log *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.URLTTL <= 0 {
		c.URLTTL = DefaultURLTTL
	}
	if c.SessionTTL <= 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.ManifestTTL <= 0 {
		c.ManifestTTL = DefaultManifestTTL
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = DefaultCacheBytes
	}
	if c.CacheObjectMax <= 0 {
		c.CacheObjectMax = DefaultCacheObjectMax
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Protected == nil {
		c.Protected = func() bool { return false }
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}
