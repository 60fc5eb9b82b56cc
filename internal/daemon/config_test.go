package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Precedence is flag > env > file > default, key by key.
func TestConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "reportd.yaml")
	os.WriteFile(file, []byte("addr: 127.0.0.1:1111\ndata_dir: /from/file\ntime_zone: Asia/Shanghai\nmax_upload_bytes: 5MiB\nerror_status: conventional\nshutdown_timeout: 3s\n"), 0o600)
	t.Setenv("REPORTD_DATA_DIR", "/from/env")
	t.Setenv("REPORTD_AUTH_TOKEN", "s3cret")
	cmd := newServeCommand()
	if err := cmd.ParseFlags([]string{"--config", file, "--addr", "127.0.0.1:2222"}); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(cmd.Flags())
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
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	for _, env := range [][2]string{
		{"REPORTD_ERROR_STATUS", "sometimes"},
		{"REPORTD_TIME_ZONE", "Mars/Olympus"},
		{"REPORTD_MAX_UPLOAD_BYTES", "lots"},
	} {
		t.Run(env[0], func(t *testing.T) {
			t.Setenv(env[0], env[1])
			cmd := newServeCommand()
			cmd.ParseFlags(nil)
			if _, err := loadConfig(cmd.Flags()); err == nil {
				t.Fatalf("%s=%s accepted", env[0], env[1])
			}
		})
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"1048576": 1 << 20, "512MiB": 512 << 20, "2GiB": 2 << 30, "5MB": 5e6, "10k": 10 << 10} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("%s: %d %v", in, got, err)
		}
	}
}
