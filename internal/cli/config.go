package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/exitcode"
)

// Config is reportctl's effective configuration. Each field's key is also
// its flag name, its config file key, and (upper-cased, '-' → '_', prefixed
// REPORTCTL_) its environment variable.
type Config struct {
	Server         string        `mapstructure:"server"`
	Token          string        `mapstructure:"token"`
	Timeout        time.Duration `mapstructure:"timeout"`
	ConnectTimeout time.Duration `mapstructure:"connect-timeout"`
	Retries        int           `mapstructure:"retries"`
	RetryWait      time.Duration `mapstructure:"retry-wait"`
	RetryMaxWait   time.Duration `mapstructure:"retry-max-wait"`

	// File is the config file that was read, "" when none.
	File string `mapstructure:"-"`
	// Sources says where each key's value came from.
	Sources map[string]string `mapstructure:"-"`
	// Unknown lists keys of the file that are not settings (likely typos).
	Unknown []string `mapstructure:"-"`
}

// setting describes one key for flags, defaults, docs and `reportctl config`.
type setting struct {
	key   string
	def   any
	usage string
}

// settings lists every key; the order is the order of help and `config`.
var settings = []setting{
	{"server", client.DefaultServer, "server (site) URL; the API is under <server>/api"},
	{"token", "", "bearer token sent as Authorization header"},
	{"timeout", client.DefaultTimeout, "time limit of one request attempt (streams: until headers arrive)"},
	{"connect-timeout", client.DefaultConnectTimeout, "time limit of connecting to the server"},
	{"retries", client.DefaultRetries, "retries of a request after a connection error or a transient server error"},
	{"retry-wait", client.DefaultRetryWait, "first retry backoff; doubles each retry up to --retry-max-wait, with jitter"},
	{"retry-max-wait", client.DefaultRetryMaxWait, "longest backoff between two retries"},
}

// configKey is the flag/env that chooses the config file; it cannot live in the file.
const configKey = "config"

const envPrefix = "REPORTCTL"

// EnvName is the environment variable of a key.
func EnvName(key string) string {
	return envPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
}

// DefaultConfigFile is ~/.config/reportctl/config.yaml ($XDG_CONFIG_HOME honoured).
func DefaultConfigFile() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "reportctl", "config.yaml")
}

// addConfigFlags registers the global flags on the root command.
func addConfigFlags(flags *pflag.FlagSet) {
	flags.String(configKey, "", "config file (default ~/.config/reportctl/config.yaml)")
	for _, s := range settings {
		switch d := s.def.(type) {
		case string:
			flags.String(s.key, d, s.usage)
		case int:
			flags.Int(s.key, d, s.usage)
		case time.Duration:
			flags.Duration(s.key, d, s.usage)
		}
	}
}

// loadConfig resolves flag > env > file > default with a private viper and
// unmarshals into Config. Errors are usage errors: the invocation is wrong.
func loadConfig(flags *pflag.FlagSet) (*Config, error) {
	v := viper.New()
	v.SetEnvPrefix(envPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	for _, s := range settings {
		v.SetDefault(s.key, s.def)
		if f := flags.Lookup(s.key); f != nil {
			if err := v.BindPFlag(s.key, f); err != nil {
				return nil, err
			}
		}
	}

	file, explicit, fileSource := configFile(flags)
	cfg := &Config{Sources: map[string]string{configKey: fileSource}}
	if _, err := os.Stat(file); file != "" && (explicit || !errors.Is(err, fs.ErrNotExist)) {
		// The default file is optional; one that was asked for is not.
		v.SetConfigFile(file)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return nil, exitcode.With(exitcode.Usage, fmt.Errorf("config file %s: %w", file, err))
		}
		cfg.File = file
	}
	if err := v.Unmarshal(cfg); err != nil {
		return nil, exitcode.With(exitcode.Usage, fmt.Errorf("configuration: %w", err))
	}
	for _, s := range settings {
		cfg.Sources[s.key] = sourceOf(v, flags, s.key, cfg.File)
	}
	if cfg.File != "" {
		cfg.Unknown = unknownKeys(v)
	}
	if _, err := client.SiteURL(cfg.Server); err != nil {
		return nil, exitcode.With(exitcode.Usage, err)
	}
	if cfg.Retries < 0 {
		return nil, exitcode.With(exitcode.Usage, fmt.Errorf("retries must be >= 0 (got %d)", cfg.Retries))
	}
	if cfg.RetryWait < 0 || cfg.RetryMaxWait < 0 {
		return nil, exitcode.With(exitcode.Usage, fmt.Errorf("retry waits must not be negative (got %v and %v)", cfg.RetryWait, cfg.RetryMaxWait))
	}
	return cfg, nil
}

func configFile(flags *pflag.FlagSet) (path string, explicit bool, source string) {
	if f := flags.Lookup(configKey); f != nil && f.Changed {
		return f.Value.String(), true, "flag --config"
	}
	if p, ok := os.LookupEnv(EnvName(configKey)); ok && p != "" {
		return p, true, "env " + EnvName(configKey)
	}
	return DefaultConfigFile(), false, "default"
}

func sourceOf(v *viper.Viper, flags *pflag.FlagSet, key, file string) string {
	if f := flags.Lookup(key); f != nil && f.Changed {
		return "flag --" + key
	}
	if val, ok := os.LookupEnv(EnvName(key)); ok && val != "" {
		return "env " + EnvName(key)
	}
	if file != "" && v.InConfig(key) {
		return "file " + file
	}
	return "default"
}

// unknownKeys are keys of the file that reportctl does not know: most
// likely typos, reported as warnings rather than silently ignored.
func unknownKeys(v *viper.Viper) []string {
	var out []string
	for _, k := range v.AllKeys() {
		if !slices.ContainsFunc(settings, func(s setting) bool { return s.key == k }) && k != configKey {
			if v.InConfig(k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}
