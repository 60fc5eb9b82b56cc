package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// defaultConfigFile is read when neither --config nor REPORTD_CONFIG names
// a file; it may be absent.
const defaultConfigFile = "/etc/reportd/reportd.yaml"

// Load starts from the defaults and applies the config file, the
// REPORTD_* variables and the flags that were set, in rising precedence.
// An unknown key or variable, or a bad value, is an error that names it.
func Load(flags *pflag.FlagSet) (Config, error) {
	return LoadEnv(flags, os.Environ())
}

// LoadEnv is Load with the environment given.
func LoadEnv(flags *pflag.FlagSet, environ []string) (Config, error) {
	c := DefaultConfig()
	file, explicit := configFile(flags, environ)
	if file != "" {
		if err := applyFile(&c, file, explicit); err != nil {
			return Config{}, err
		}
	}
	if err := applyEnv(&c, environ); err != nil {
		return Config{}, err
	}
	if err := applyFlags(&c, flags); err != nil {
		return Config{}, err
	}
	c.awsCredentials(environ)
	return c, c.Validate()
}

func configFile(flags *pflag.FlagSet, environ []string) (path string, explicit bool) {
	if f := flags.Lookup("config"); f != nil && f.Changed {
		return f.Value.String(), true
	}
	for _, kv := range environ {
		if p, ok := strings.CutPrefix(kv, "REPORTD_CONFIG="); ok && p != "" {
			return p, true
		}
	}
	return defaultConfigFile, false
}

// applyFile sets what the file sets. A file that was asked for must exist.
func applyFile(c *Config, file string, explicit bool) error {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil
	}
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	entries, errs := parseFile(file, b)
	for _, e := range entries {
		if err := e.set.kind.set(c, e.value); err != nil {
			errs = append(errs, fmt.Errorf("config %s:%d: %s %w", file, e.line, e.set.key, err))
		}
	}
	return errors.Join(errs...)
}

// applyEnv sets what REPORTD_* variables set; empty ones count as unset.
func applyEnv(c *Config, environ []string) error {
	byEnv := map[string]setting{}
	for _, s := range settings {
		byEnv[envName(s.key)] = s
	}
	var errs []error
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || slices.Contains(notSettings, name) {
			continue
		}
		s, ok := byEnv[name]
		if !ok {
			// The name only: a misspelt REPORTD_POSTGRES_DSN or
			// REPORTD_S3_SECRET_KEY holds a secret the error must not carry.
			key := strings.ToLower(strings.TrimPrefix(name, envPrefix))
			errs = append(errs, fmt.Errorf("%s: not a reportd setting%s", name, hint(envKey(key), "variables", envName)))
			continue
		}
		if value == "" {
			continue
		}
		if err := s.kind.set(c, value); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %s %w", name, value, s.key, err))
		}
	}
	return errors.Join(errs...)
}

// envKey turns the lower-cased tail of a variable (auth_tokn) back into
// the key it most likely means: a known section's prefix becomes "section.".
func envKey(tail string) string {
	for _, s := range settings {
		if sec, _, ok := strings.Cut(s.key, "."); ok && strings.HasPrefix(tail, sec+"_") {
			return sec + "." + strings.TrimPrefix(tail, sec+"_")
		}
	}
	return tail
}

// applyFlags sets what the command line set.
func applyFlags(c *Config, flags *pflag.FlagSet) error {
	for _, s := range settings {
		if s.flag == "" {
			continue
		}
		if f := flags.Lookup(s.flag); f != nil && f.Changed {
			if err := s.kind.set(c, f.Value.String()); err != nil {
				return fmt.Errorf("--%s: %w", s.flag, err)
			}
		}
	}
	return nil
}
