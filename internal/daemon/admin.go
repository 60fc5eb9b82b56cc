package daemon

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
)

// adminPrefix is outside /api: the admin endpoints are for `reportd backup`,
// not for API clients, and never appear in the API's OpenAPI document.
const adminPrefix = "/admin/"

// adminHandler serves GET /admin/backup: a consistent archive of the
// running daemon's data. bbolt lets only one process open the file, so an
// online backup has to come from the daemon itself.
//
// Access: the bearer token when auth.token is set (whatever auth.reads
// says: a backup is every byte of every report), or the per-run key the
// daemon writes into the data directory's 0600 serve file, or a client on
// a unix socket (its file permissions decide). Being on loopback is not
// enough: behind a reverse proxy on the same host every client is.
type adminHandler struct {
	store *boltstore.Store
	files *files.Dir
	token string
	key   string // per-run admin key, see servefile.go
	log   *slog.Logger
}

func (a *adminHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !a.allowed(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="reportd"`)
		http.Error(w, "forbidden: the admin endpoints need the bearer token or the admin key from the data directory (reportd backup --data-dir sends it)", http.StatusForbidden)
		return
	}
	if r.URL.Path != adminPrefix+"backup" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	start := time.Now()
	snap, err := takeSnapshot(a.store, a.files)
	if err != nil {
		a.log.Error("backup snapshot failed", "err", err)
		http.Error(w, "backup failed: see the daemon's log", http.StatusInternalServerError)
		return
	}
	defer snap.remove()
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="reportd-backup-%s.tar"`, start.UTC().Format("20060102T150405Z")))
	w.Header().Set("Cache-Control", "no-store")
	m, err := writeArchive(w, snap)
	if err != nil {
		// The status is already sent; the client sees an archive without a
		// manifest and refuses it.
		a.log.Error("backup stream failed", "err", err)
		return
	}
	a.log.Info("backup served", "files", len(m.Entries), "missing", len(m.Missing), "duration", time.Since(start))
}

func (a *adminHandler) allowed(r *http.Request) bool {
	if a.token != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && equalSecret(got, a.token) {
			return true
		}
	}
	if a.key != "" && equalSecret(r.Header.Get(adminKeyHeader), a.key) {
		return true
	}
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && la.Network() == "unix"
}

// adminKeyHeader carries the per-run admin key.
const adminKeyHeader = "X-Reportd-Admin-Key"

// equalSecret compares digests in constant time, so neither length nor
// content leaks through timing.
func equalSecret(got, want string) bool {
	x, y := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}

func newAdminKey() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// withAdmin routes /admin/ to the admin handler and everything else, as
// it came, to the API (a ServeMux here would clean and redirect paths
// before the API's own checks see them).
func withAdmin(api http.Handler, admin http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, adminPrefix) {
			admin.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
