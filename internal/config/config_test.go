package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// loadArgs loads the config as `reportd serve ARGS` would in environ.
func loadArgs(t *testing.T, environ []string, args ...string) (Config, error) {
	t.Helper()
	cmd := &cobra.Command{}
	Flags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return LoadEnv(cmd.Flags(), environ)
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "reportd.yaml")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// Precedence is flag > env > file > default, key by key.
func TestConfigPrecedence(t *testing.T) {
	file := writeFile(t, "addr: 127.0.0.1:1111\ndata_dir: /from/file\ntime_zone: Asia/Shanghai\nmax_upload_bytes: 5MiB\nerror_status: conventional\nshutdown_timeout: 3s\nauth:\n  token: from-file\n")
	env := []string{"REPORTD_DATA_DIR=/from/env", "REPORTD_AUTH_TOKEN=s3cret", "HOME=/root"}
	c, err := loadArgs(t, env, "--config", file, "--addr", "127.0.0.1:2222")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"addr from flag", c.Addr, "127.0.0.1:2222"},
		{"data_dir from env", c.DataDir, "/from/env"},
		{"auth.token from env", c.Auth.Token, "s3cret"},
		{"time_zone from file", c.TimeZone, "Asia/Shanghai"},
		{"max_upload_bytes from file", c.MaxUploadBytes, ByteSize(5 << 20)},
		{"error_status from file", c.ErrorStatus, "conventional"},
		{"shutdown_timeout from file", c.ShutdownTimeout, 3 * time.Second},
		{"max_cover_bytes default", c.MaxCoverBytes, ByteSize(10 << 20)},
		{"read_header_timeout default", c.HeaderTimeout, 10 * time.Second},
		{"dashboard default", c.Dashboard, true},
		{"convert.queue_size default", c.Convert.QueueSize, 32},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	// REPORTD_CONFIG chooses the file when --config does not.
	c, err = loadArgs(t, []string{"REPORTD_CONFIG=" + file})
	if err != nil || c.DataDir != "/from/file" {
		t.Fatalf("REPORTD_CONFIG: data_dir %q, %v", c.DataDir, err)
	}
}

// A bad value names where it came from and what is allowed.
func TestConfigRejectsBadValues(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"REPORTD_ERROR_STATUS=sometimes", `REPORTD_ERROR_STATUS="sometimes": error_status must be spec or conventional`},
		{"REPORTD_TIME_ZONE=Mars/Olympus", `REPORTD_TIME_ZONE="Mars/Olympus": time_zone must be an IANA time zone`},
		{"REPORTD_MAX_UPLOAD_BYTES=lots", `REPORTD_MAX_UPLOAD_BYTES="lots": max_upload_bytes bad size`},
		{"REPORTD_LOG_LEVEL=verbose", `REPORTD_LOG_LEVEL="verbose": log.level must be debug, info, warn or error`},
		{"REPORTD_AUTH_READS=maybe", `REPORTD_AUTH_READS="maybe": auth.reads must be true or false`},
		{"REPORTD_CONVERT_QUEUE_SIZE=-1", `REPORTD_CONVERT_QUEUE_SIZE="-1": convert.queue_size must be a whole number >= 0`},
	} {
		_, err := loadArgs(t, []string{tc.env}, "--config", os.DevNull)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.env, err, tc.want)
		}
	}
	if _, err := loadArgs(t, nil, "--config", os.DevNull, "--addr", ""); err == nil || !strings.Contains(err.Error(), "--addr: must not be empty") {
		t.Errorf("--addr '': %v", err)
	}
}

// Unknown REPORTD_* variables stop the daemon, naming the nearest one;
// the few that are not settings pass.
func TestConfigUnknownVariables(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"REPORTD_LOG=/var/log/x", "REPORTD_LOG: not a reportd setting (log is a section; its variables are REPORTD_LOG_LEVEL, REPORTD_LOG_FORMAT)"},
		{"REPORTD_AUTH_TOKN=x", "REPORTD_AUTH_TOKN: not a reportd setting (did you mean REPORTD_AUTH_TOKEN?)"},
		{"REPORTD_TOKEN=x", "(did you mean REPORTD_AUTH_TOKEN?)"},
		{"REPORTD_DATADIR=/d", "(did you mean REPORTD_DATA_DIR?)"},
	} {
		_, err := loadArgs(t, []string{tc.env}, "--config", os.DevNull)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.env, err, tc.want)
		}
	}
	// A misspelt secret's value stays out of the error (it ends up in logs).
	const pw = "pw-in-a-misspelt-variable"
	if _, err := loadArgs(t, []string{"REPORTD_POSTGRES_DNS=postgres://u:" + pw + "@db/r"}, "--config", os.DevNull); err == nil || strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), "REPORTD_POSTGRES_DNS: not a reportd setting") {
		t.Errorf("misspelt DSN variable: %v (must name it, never hold its value)", err)
	}
	env := []string{"REPORTD_ACTIVE_HELP=0", "REPORTD_CRASH_KEEP=1", "REPORTD_CONVERT_WARM_ON_START=false", "REPORTD_AUTH_TOKEN="}
	c, err := loadArgs(t, env, "--config", os.DevNull)
	if err != nil || c.Convert.WarmOnStart {
		t.Fatalf("variables that are not settings, or empty ones: %v (warm_on_start %v)", err, c.Convert.WarmOnStart)
	}
}

// A misspelt key stops the daemon with the file, the line, the key and the
// nearest valid key; a typo under auth: must not leave the API open.
func TestConfigUnknownKeys(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"error_stauts: conventional\n", ":1: unknown key error_stauts (did you mean error_status?)"},
		{"auth:\n  tokn: s3cret\n", ":2: unknown key auth.tokn (did you mean auth.token?)"},
		{"token: s3cret\n", ":1: unknown key token (did you mean auth.token?)"},
		{"addr: 127.0.0.1:1\nfrobnicate: true\n", ":2: unknown key frobnicate (config/reportd.yaml lists every key)"},
		{"log: debug\n", ":1: log is a section; write its keys below it (log.level, log.format)"},
		{"addr:\n  host: x\n", ":1: addr takes a single value"},
		{"convert:\n  paper: A5\n", `:2: convert.paper must be A4 or Letter, not "A5"`},
	} {
		file := writeFile(t, tc.yaml)
		_, err := loadArgs(t, nil, "--config", file)
		if err == nil || !strings.Contains(err.Error(), "config "+file+tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
	for _, empty := range []string{"", "# only comments\n", "---\n"} {
		if _, err := loadArgs(t, nil, "--config", writeFile(t, empty)); err != nil {
			t.Errorf("%q: %v", empty, err)
		}
	}
}

// config/reportd.yaml lists exactly the settings, each at its default.
func TestConfigFileMatchesSettings(t *testing.T) {
	const path = "../../config/reportd.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	entries, errs := parseFile(path, b)
	for _, err := range errs {
		t.Error(err) // keys the table does not have
	}
	inFile := map[string]bool{}
	def := DefaultConfig()
	for _, e := range entries {
		inFile[e.set.key] = true
		var c Config
		if err := e.set.kind.set(&c, e.value); err != nil {
			t.Errorf("%s:%d: %s: %v", path, e.line, e.set.key, err)
			continue
		}
		if got, want := e.set.kind.format(&c), e.set.kind.format(&def); got != want {
			t.Errorf("%s:%d: %s is %s in the file, %s in the table", path, e.line, e.set.key, got, want)
		}
	}
	for _, s := range settings {
		if !inFile[s.key] {
			t.Errorf("%s: setting %s is missing", path, s.key)
		}
	}
}

// Every setting has a distinct key and variable, parses its own default
// and reads back what it writes; the help lists every key.
func TestSettingsTable(t *testing.T) {
	seen := map[string]bool{}
	help := Help()
	for _, s := range settings {
		if seen[s.key] || seen[envName(s.key)] {
			t.Errorf("%s: duplicate", s.key)
		}
		seen[s.key], seen[envName(s.key)] = true, true
		var c Config
		if err := s.kind.set(&c, s.def); err != nil {
			t.Errorf("%s: default %q: %v", s.key, s.def, err)
		}
		var back Config
		if err := s.kind.set(&back, s.kind.format(&c)); err != nil || s.kind.format(&back) != s.kind.format(&c) {
			t.Errorf("%s: %q does not read back: %v", s.key, s.kind.format(&c), err)
		}
		if !strings.Contains(help, envName(s.key)) {
			t.Errorf("serve --help lacks %s", s.key)
		}
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"1048576": 1 << 20, "512MiB": 512 << 20, "2GiB": 2 << 30, "5MB": 5e6, "10k": 10 << 10} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("%s: %d %v", in, got, err)
		}
	}
}

// A list key takes a YAML list in the file and comma-separated text in
// its variable.
func TestConfigListKey(t *testing.T) {
	c, err := loadArgs(t, nil, "--config", writeFile(t, "allowed_hosts:\n  - a.example\n  - \"*.b.example\"\n"))
	if err != nil || strings.Join(c.AllowedHosts, " ") != "a.example *.b.example" {
		t.Fatalf("from the file: %q %v", c.AllowedHosts, err)
	}
	c, err = loadArgs(t, []string{"REPORTD_ALLOWED_HOSTS=c.example, d.example"}, "--config", writeFile(t, "allowed_hosts: [a.example]\n"))
	if err != nil || strings.Join(c.AllowedHosts, " ") != "c.example d.example" {
		t.Fatalf("env over file: %q %v", c.AllowedHosts, err)
	}
	if _, err := loadArgs(t, nil, "--config", writeFile(t, "allowed_hosts: [a.example, [b]]\n")); err == nil || !strings.Contains(err.Error(), ":1: allowed_hosts: each item must be a single value") {
		t.Fatalf("nested list: %v", err)
	}
	if _, err := loadArgs(t, nil, "--config", writeFile(t, "max_connections: [1]\n")); err == nil || !strings.Contains(err.Error(), "max_connections takes a single value") {
		t.Fatalf("list for a single value: %v", err)
	}
}

// The convert section fills convert.Config itself: a key whose 0 means
// none (never remember failures, no variant cap, no small-deck lane) is
// the engines' -1, since their 0 means their default; sizes are bytes.
func TestConvertKeysAreTheEnginesConfig(t *testing.T) {
	c, err := loadArgs(t, nil, "--config", os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	cc := c.Convert.Config
	if cc.FailureTTL != 2*time.Minute || cc.MaxVariantsPerReport != 8 || cc.SmallDeckBytes != 1<<20 || cc.MaxWorkerRSS != 1<<30 || cc.DeckMaxBytes != 512<<20 || !c.Convert.WarmOnStart {
		t.Fatalf("defaults: %+v warm %v", cc, c.Convert.WarmOnStart)
	}
	c, err = loadArgs(t, []string{"REPORTD_CONVERT_FAILURE_TTL=0s", "REPORTD_CONVERT_MAX_VARIANTS_PER_REPORT=0", "REPORTD_CONVERT_SMALL_DECK_BYTES=0", "REPORTD_CONVERT_CACHE_MAX_BYTES=5MiB"}, "--config", os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	cc = c.Convert.Config
	if cc.FailureTTL != -1 || cc.MaxVariantsPerReport != -1 || cc.SmallDeckBytes != -1 || cc.CacheMaxBytes != 5<<20 {
		t.Fatalf("0 as none: failure_ttl %v, max_variants %d, small_deck %d, cache %d", cc.FailureTTL, cc.MaxVariantsPerReport, cc.SmallDeckBytes, cc.CacheMaxBytes)
	}
	if _, err := loadArgs(t, []string{"REPORTD_CONVERT_FAILURE_TTL=-1s"}, "--config", os.DevNull); err == nil {
		t.Fatal("a negative failure_ttl was taken")
	}
}
