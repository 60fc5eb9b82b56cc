package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
)

// Backup writes a backup archive of cfg's data directory to out.
//
// bbolt lets one process at a time open the file, so Backup first tries a
// shared, read-only open: if that succeeds no daemon runs on the directory
// and the snapshot is taken here; if the store is locked, the running
// daemon is asked for the archive over GET /admin/backup at server (default:
// the address the daemon recorded in the data directory, else the
// configured addr on loopback). Either way the archive is written to
// out.partial, read back and verified, and only then renamed to out.
func Backup(ctx context.Context, cfg config.Config, out, server string) (Manifest, error) {
	if out == "" {
		return Manifest{}, errors.New("--out is required")
	}
	if cfg.OnPostgres() {
		return Manifest{}, ErrPostgresBackup
	}
	return ops.WriteBackup(out, func(w io.Writer) error {
		if server == "" {
			err := backupOffline(cfg, w)
			if !errors.Is(err, boltstore.ErrLocked) {
				return err
			}
			server = "http://" + loopbackAddr(cfg.Addr)
			if si, ok := readServeInfo(cfg.DataDir); ok {
				server = si.URL
			}
		}
		return backupOnline(ctx, cfg, server, w)
	})
}

// Manifest describes a backup archive (ops.Manifest).
type Manifest = ops.Manifest

// Restore unpacks a backup archive into dataDir (ops.Restore).
func Restore(in, dataDir string) (Manifest, error) { return ops.Restore(in, dataDir) }

func backupOffline(cfg config.Config, w io.Writer) error {
	dbPath, err := existingStore(cfg)
	if err != nil {
		return err
	}
	loc, err := cfg.Location()
	if err != nil {
		return err
	}
	store, err := boltstore.OpenReadOnly(dbPath, report.Clock{Location: loc}, 300*time.Millisecond)
	if err != nil {
		return err
	}
	defer store.Close()
	dir, err := files.Open(cfg.DataDir)
	if err != nil {
		return err
	}
	defer dir.Close()
	snap, err := ops.TakeSnapshot(store, dir)
	if err != nil {
		return err
	}
	defer snap.Remove()
	_, err = ops.WriteArchive(w, snap)
	return err
}

func backupOnline(ctx context.Context, cfg config.Config, server string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server+"/admin/backup", nil)
	if err != nil {
		return err
	}
	if cfg.Auth.Token != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.Auth.Token)
	}
	if si, ok := readServeInfo(cfg.DataDir); ok && si.AdminKey != "" {
		req.Header.Set(adminKeyHeader, si.AdminKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the store is locked by a running daemon, and asking it for the backup failed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s/admin/backup answered %s: %s", server, resp.Status, msg)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// loopbackAddr turns a listen address into one to dial: a wildcard host
// ("", 0.0.0.0, ::) becomes 127.0.0.1.
func loopbackAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
