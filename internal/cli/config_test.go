package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func configJSON(t *testing.T, args ...string) map[string]configEntry {
	t.Helper()
	r := run(t, false, append([]string{"config", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("config: %+v", r)
	}
	var out map[string]configEntry
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	return out
}

// TestConfigPrecedence: flag > env > file > default, and `config` says which.
func TestConfigPrecedence(t *testing.T) {
	dir := isolate(t)
	// The default file location ($XDG_CONFIG_HOME/reportctl/config.yaml).
	def := writeFile(t, filepath.Join(dir, "xdg", "reportctl", "config.yaml"),
		"server: http://from-file:1\nretries: 7\ntoken: filetoken\nretry-wait: 2s\n")

	c := configJSON(t)
	if c["server"].Value != "http://from-file:1" || c["server"].Source != "file "+def {
		t.Fatalf("file: %+v", c["server"])
	}
	if c["retries"].Value != float64(7) || c["timeout"].Source != "default" || c["timeout"].Value != "5m0s" {
		t.Fatalf("file/default: %+v %+v", c["retries"], c["timeout"])
	}
	if c["token"].Value != "********" || c["config"].Value != def {
		t.Fatalf("token must be masked, config named: %+v %+v", c["token"], c["config"])
	}

	t.Setenv("REPORTCTL_SERVER", "http://from-env:2")
	t.Setenv("REPORTCTL_RETRY_WAIT", "40ms")
	c = configJSON(t)
	if c["server"].Value != "http://from-env:2" || c["server"].Source != "env REPORTCTL_SERVER" {
		t.Fatalf("env: %+v", c["server"])
	}
	if c["retry-wait"].Value != "40ms" || c["retries"].Source != "file "+def {
		t.Fatalf("env/file: %+v %+v", c["retry-wait"], c["retries"])
	}

	c = configJSON(t, "--server", "http://from-flag:3", "--retries", "0", "--show-token")
	if c["server"].Value != "http://from-flag:3" || c["server"].Source != "flag --server" || c["retries"].Value != float64(0) {
		t.Fatalf("flag: %+v %+v", c["server"], c["retries"])
	}
	if c["token"].Value != "filetoken" {
		t.Fatalf("--show-token: %+v", c["token"])
	}

	// An explicit file replaces the default one.
	other := writeFile(t, filepath.Join(dir, "other.yaml"), "timeout: 9s\nsevrer: typo\n")
	r := run(t, false, "config", "--json", "--config", other)
	if r.code != 0 || !strings.Contains(r.stderr, `unknown key "sevrer"`) {
		t.Fatalf("typo warning: %+v", r)
	}
	c = configJSON(t, "--config", other)
	if c["timeout"].Value != "9s" || c["retries"].Source != "default" || c["config"].Source != "flag --config" {
		t.Fatalf("--config: %+v", c)
	}
	t.Setenv("REPORTCTL_CONFIG", other)
	if c = configJSON(t); c["config"].Source != "env REPORTCTL_CONFIG" {
		t.Fatalf("REPORTCTL_CONFIG: %+v", c["config"])
	}

	bad := writeFile(t, filepath.Join(dir, "bad.yaml"), "retries: [\n")
	if r := run(t, false, "config", "--config", bad); r.code != 2 {
		t.Fatalf("broken yaml: %+v", r)
	}
}

// TestSampleConfig: the documented sample parses and sets every key.
func TestSampleConfig(t *testing.T) {
	isolate(t)
	c := configJSON(t, "--config", filepath.Join("..", "..", "config", "reportctl.yaml"))
	for _, s := range settings {
		if s.key == "token" {
			continue // commented out in the sample on purpose
		}
		if !strings.HasPrefix(c[s.key].Source, "file ") {
			t.Errorf("sample config does not set %s: %+v", s.key, c[s.key])
		}
	}
}
