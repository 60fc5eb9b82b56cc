package daemon

import (
	"crypto/sha256"
	"crypto/subtle"
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
// Access: with auth.token set, the bearer token is required (whatever
// auth.reads says: a backup is every byte of every report). Without a
// token only loopback and unix-socket clients are served.
type adminHandler struct {
	store *boltstore.Store
	files *files.Dir
	token string
	log   *slog.Logger
}

func (a *adminHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !a.allowed(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="reportd"`)
		http.Error(w, "forbidden: the admin endpoints need the bearer token, or a loopback client when no token is configured", http.StatusForbidden)
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
		x, y := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(a.token))
		return ok && subtle.ConstantTimeCompare(x[:], y[:]) == 1
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la.Network() == "unix" {
		return true // file permissions on the socket decide
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
