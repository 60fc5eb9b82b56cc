package daemon

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"time"
)

// serveFileName, in the data directory, tells `reportd backup` where the
// daemon that holds the store is listening (its addr may be :0, a flag, or
// a socket systemd passed). It is written after the listener is bound and
// removed on a clean stop; a stale one (after a crash) is harmless because
// backup consults it only while the store is actually locked.
const serveFileName = "reportd.serve.json"

type serveInfo struct {
	PID     int       `json:"pid"`
	URL     string    `json:"url"`
	Started time.Time `json:"started"`
	// AdminKey lets `reportd backup` fetch /admin/backup without the API
	// token: reading this 0600 file already proves access to the data.
	AdminKey string `json:"adminKey,omitempty"`
}

func writeServeInfo(dataDir string, ln net.Listener, adminKey string) error {
	if ln.Addr().Network() != "tcp" {
		return nil // a unix socket: backup needs --server
	}
	b, err := json.Marshal(serveInfo{PID: os.Getpid(), URL: "http://" + loopbackAddr(ln.Addr().String()), Started: time.Now().UTC(), AdminKey: adminKey})
	if err != nil {
		return err
	}
	tmp := filepath.Join(dataDir, serveFileName+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dataDir, serveFileName))
}

func readServeInfo(dataDir string) (serveInfo, bool) {
	var si serveInfo
	b, err := os.ReadFile(filepath.Join(dataDir, serveFileName))
	if err != nil || json.Unmarshal(b, &si) != nil || si.URL == "" {
		return si, false
	}
	return si, true
}

func removeServeInfo(dataDir string) {
	p := filepath.Join(dataDir, serveFileName)
	if si, ok := readServeInfo(dataDir); ok && si.PID == os.Getpid() {
		os.Remove(p)
	}
}
