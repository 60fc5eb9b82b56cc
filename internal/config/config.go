// Package config is reportd's configuration: the settings table
// (settings.go) that the config file, the REPORTD_* variables, the flags,
// --help and the man page are all read from, loading with precedence
// (load.go, configfile.go), value kinds (kinds.go) and the checks that
// involve more than one key (storage.go, exposure.go, content.go, badges.go).
package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is reportd's configuration. The settings table (settings.go)
// names, documents and parses every field; config/reportd.yaml shows them
// with their defaults. Precedence: flag > REPORTD_* env > config file > default.
type Config struct {
	Addr            string
	DataDir         string
	Storage         string // shorthand for the two below: "bolt", "postgres", "postgres+s3" or "" (stores.go)
	MetadataStore   string // "bolt", "postgres" or "" (storage decides, else bolt)
	FileStore       string // "local", "s3" or "" (storage decides, else local)
	Postgres        struct{ DSN, DSNFile string }
	S3              S3Config
	TimeZone        string
	MaxUploadBytes  ByteSize
	MaxCoverBytes   ByteSize
	ErrorStatus     string
	ShutdownTimeout time.Duration
	StartupWait     time.Duration
	HeaderTimeout   time.Duration
	IdleTimeout     time.Duration
	Dashboard       bool
	HTMLScripts     bool
	ConvertOnUpload bool
	Convert         ConvertConfig
	Auth            struct {
		Token     string
		Reads     bool
		Anonymous bool
	}
	CoverFetch struct {
		Timeout      time.Duration
		AllowPrivate bool
	}
	Admin   struct{ Enabled bool }
	Clients struct{ Dir string } // reportctl downloads at /dl/ (httpapi/dl.go)
	Metrics struct{ Enabled bool }
	Log     struct{ Level, Format string }
	Badges  BadgesConfig
	// Content is the content origin (daemon/contentorigin.go).
	Content ContentConfig
	// Retention is the server-wide default policy and the sweeper's period.
	Retention struct {
		KeepLast            int
		MaxAgeDays          int
		KeepNewestPerBranch bool
		Interval            time.Duration
	}
	// Sweep is the bucket sweep of storage: postgres+s3 (internal/bucketsweep).
	Sweep struct {
		Interval time.Duration
		Grace    time.Duration
	}
	// Sites bounds site uploads (issue 16) and their GC's grace period.
	Sites struct {
		MaxEntries int
		MaxBytes   ByteSize
		MaxRatio   int
		GCGrace    time.Duration
	}

	// HTTP exposure and input bounds (docs/operations.md, "Exposing reportd").
	PublicURL         string
	AllowedHosts      []string
	MaxConnections    int
	MaxInlineContent  ByteSize
	UploadMinRate     ByteSize
	UploadRateGrace   time.Duration
	UploadIdleTimeout time.Duration

	// Connection guard and response pacing (daemon/netguard.go).
	MaxConnectionsPerClient int
	TrustedProxies          []string
	DownloadMinRate         ByteSize
	DownloadRateGrace       time.Duration
	DownloadIdleTimeout     time.Duration
	WriteTimeout            time.Duration
}

// Validate checks what involves more than one key; each value was checked
// by its setting's kind as it was read.
func (c *Config) Validate() error {
	if err := c.ValidateStorage(); err != nil {
		return err
	}
	if err := c.validateExposure(); err != nil {
		return err
	}
	if err := c.validateContent(); err != nil {
		return err
	}
	return c.Badges.validate()
}

// Location is time_zone as a location; empty means time.Local.
func (c *Config) Location() (*time.Location, error) {
	if c.TimeZone == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(c.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("time_zone %q: %w", c.TimeZone, err)
	}
	return loc, nil
}

// ByteSize is a size in bytes that config may write as 1048576, "1MiB" or "1MB".
type ByteSize int64

// ParseByteSize reads "123", "10KiB", "2GiB", "5MB" (case-insensitive).
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mul    int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}}
	mul := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mul = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mul
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 1048576, 512MiB, 2GiB)", s)
	}
	return ByteSize(n * float64(mul)), nil
}

// S3Config is the bucket of storage: postgres+s3 (settings s3.*).
type S3Config struct {
	Endpoint, Bucket, Region, Prefix    string
	TLS                                 bool
	PartSize                            ByteSize
	AccessKey, SecretKey, SecretKeyFile string
	// PresignDownloads: downloads of non-HTML reports redirect to a
	// presigned URL of the object, valid PresignTTL (docs/scale-out.md).
	PresignDownloads bool
	PresignTTL       time.Duration
}
