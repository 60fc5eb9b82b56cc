package cli

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/spf13/pflag"

	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/report"
)

// Factory hands commands their shared dependencies. Config and client are
// built lazily, after flags are parsed, and only by commands that need them.
type Factory struct {
	IO *IOStreams

	flags *pflag.FlagSet // the root's persistent flags, set by NewRootCommand

	retries *retryNotes

	cfgOnce sync.Once
	cfg     *Config
	cfgErr  error

	cliOnce sync.Once
	cli     *client.Client
	cliErr  error
}

// NewFactory returns a factory over io.
func NewFactory(io *IOStreams) *Factory {
	return &Factory{IO: io, retries: &retryNotes{out: io.ErrOut}}
}

// Config is the effective configuration.
func (f *Factory) Config() (*Config, error) {
	f.cfgOnce.Do(func() {
		if f.flags == nil {
			f.flags = pflag.NewFlagSet("reportctl", pflag.ContinueOnError)
			addConfigFlags(f.flags)
		}
		f.cfg, f.cfgErr = loadConfig(f.flags)
		if f.cfgErr == nil {
			for _, k := range f.cfg.Unknown {
				fmt.Fprintf(f.IO.ErrOut, "warning: config file %s: unknown key %q\n", f.cfg.File, k)
			}
		}
	})
	return f.cfg, f.cfgErr
}

// Client is the configured API client.
func (f *Factory) Client() (*client.Client, error) {
	f.cliOnce.Do(func() {
		cfg, err := f.Config()
		if err != nil {
			f.cliErr = err
			return
		}
		f.cli, f.cliErr = client.New(client.Options{
			Server:         cfg.Server,
			Token:          cfg.Token,
			Timeout:        cfg.Timeout,
			ConnectTimeout: cfg.ConnectTimeout,
			Retries:        cfg.Retries,
			RetryWait:      cfg.RetryWait,
			RetryMaxWait:   cfg.RetryMaxWait,
			OnRetry:        f.retries.note,
			UserAgent:      fmt.Sprintf("reportctl/%s (%s/%s)", Version(), runtime.GOOS, runtime.GOARCH),
		})
	})
	return f.cli, f.cliErr
}

// Service is Client as the report.Service interface, for watch.
func (f *Factory) Service() (report.Service, error) {
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	return c, nil
}
