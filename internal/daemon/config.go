package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is reportd's configuration; config/reportd.yaml documents every
// key. Precedence: flag > REPORTD_* env > config file > default.
type Config struct {
	Addr            string        `mapstructure:"addr"`
	DataDir         string        `mapstructure:"data_dir"`
	TimeZone        string        `mapstructure:"time_zone"`
	MaxUploadBytes  ByteSize      `mapstructure:"max_upload_bytes"`
	MaxCoverBytes   ByteSize      `mapstructure:"max_cover_bytes"`
	ErrorStatus     string        `mapstructure:"error_status"`
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	HeaderTimeout   time.Duration `mapstructure:"read_header_timeout"`
	IdleTimeout     time.Duration `mapstructure:"idle_timeout"`
	Dashboard       bool          `mapstructure:"dashboard"`
	HTMLScripts     bool          `mapstructure:"html_allow_scripts"`
	ConvertOnUpload bool          `mapstructure:"convert_on_upload"`
	Convert         ConvertConfig `mapstructure:"convert"`
	Auth            struct {
		Token     string `mapstructure:"token"`
		Reads     bool   `mapstructure:"reads"`
		Anonymous bool   `mapstructure:"anonymous"`
	} `mapstructure:"auth"`
	CoverFetch struct {
		Timeout      time.Duration `mapstructure:"timeout"`
		AllowPrivate bool          `mapstructure:"allow_private"`
	} `mapstructure:"cover_fetch"`
	Admin struct {
		Enabled bool `mapstructure:"enabled"`
	} `mapstructure:"admin"`
	Metrics struct {
		Enabled bool `mapstructure:"enabled"`
	} `mapstructure:"metrics"`
	Log struct {
		Level  string `mapstructure:"level"`
		Format string `mapstructure:"format"`
	} `mapstructure:"log"`

	// HTTP exposure and input bounds (docs/operations.md, "Exposing reportd").
	PublicURL         string        `mapstructure:"public_url"`
	AllowedHosts      []string      `mapstructure:"allowed_hosts"`
	MaxConnections    int           `mapstructure:"max_connections"`
	MaxInlineContent  ByteSize      `mapstructure:"max_inline_content"`
	UploadMinRate     ByteSize      `mapstructure:"upload_min_rate"`
	UploadRateGrace   time.Duration `mapstructure:"upload_rate_grace"`
	UploadIdleTimeout time.Duration `mapstructure:"upload_idle_timeout"`
}

// defaults are the embedded defaults: bbolt and files under ./data.
var defaults = map[string]any{
	"addr":                      "127.0.0.1:8080",
	"data_dir":                  "./data",
	"time_zone":                 "",
	"max_upload_bytes":          "2GiB",
	"max_cover_bytes":           "10MiB",
	"error_status":              "spec",
	"shutdown_timeout":          "25s",
	"read_header_timeout":       "10s",
	"idle_timeout":              "2m",
	"dashboard":                 true,
	"html_allow_scripts":        false,
	"convert_on_upload":         false,
	"auth.token":                "",
	"auth.reads":                false,
	"auth.anonymous":            false,
	"public_url":                "",
	"allowed_hosts":             []string{},
	"max_connections":           1024,
	"max_inline_content":        "8MiB",
	"upload_min_rate":           "64KiB",
	"upload_rate_grace":         "10s",
	"upload_idle_timeout":       "30s",
	"cover_fetch.timeout":       "10s",
	"cover_fetch.allow_private": false,
	"admin.enabled":             true,
	"metrics.enabled":           true,
	"log.level":                 "info",
	"log.format":                "text",
}

func (c *Config) validate() error {
	switch c.ErrorStatus {
	case "spec", "conventional":
	default:
		return fmt.Errorf("error_status must be spec or conventional, not %q", c.ErrorStatus)
	}
	if c.Addr == "" {
		return fmt.Errorf("addr is empty")
	}
	if c.DataDir == "" {
		return fmt.Errorf("data_dir is empty")
	}
	if _, err := c.location(); err != nil {
		return err
	}
	return c.validateExposure()
}

func (c *Config) location() (*time.Location, error) {
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
