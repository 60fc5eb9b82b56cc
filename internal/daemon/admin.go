package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/netguard"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
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
	api   *httpapi.Server  // its error writer answers for the admin routes too
	store *boltstore.Store // nil with storage: postgres (no backup)
	meta  report.MetaStore // the metadata store (tokens check project ids in it)
	files *files.Dir
	token string
	key   string // per-run admin key, see servefile.go
	log   *slog.Logger

	tokens *tokens.Set
	// keepOneToken refuses to revoke the last live token: the daemon
	// listens beyond loopback with neither auth.token nor auth.anonymous.
	keepOneToken bool
}

func (a *adminHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := a.allowed(r); err != nil {
		a.api.WriteError(w, r, err)
		return
	}
	if r.URL.Path == adminPrefix+"tokens" || strings.HasPrefix(r.URL.Path, adminPrefix+"tokens/") {
		a.serveTokens(w, r)
		return
	}
	if r.URL.Path != adminPrefix+"backup" {
		a.api.WriteError(w, r, report.Errorf(report.NotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		a.api.WriteError(w, r, report.Errorf(report.MethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	if a.store == nil { // storage: postgres
		a.api.WriteError(w, r, report.Wrap(report.Validation, ErrPostgresBackup, ErrPostgresBackup.Error()))
		return
	}
	start := time.Now()
	snap, err := ops.TakeSnapshot(a.store, a.files)
	if err != nil {
		a.api.WriteError(w, r, report.Wrap(report.Internal, err, "backup failed: see the daemon's log"))
		return
	}
	defer snap.Remove()
	netguard.FileBody(r.Context()) // a backup is as long as the data: bounded by download_min_rate, not write_timeout
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="reportd-backup-%s.tar"`, start.UTC().Format("20060102T150405Z")))
	w.Header().Set("Cache-Control", "no-store")
	m, err := ops.WriteArchive(w, snap)
	if err != nil {
		// The status is already sent; the client sees an archive without a
		// manifest and refuses it.
		a.log.Error("backup stream failed", "err", err)
		return
	}
	a.log.Info("backup served", "files", len(m.Entries), "missing", len(m.Missing), "duration", time.Since(start))
}

// allowed admits the admin key, a unix-socket client, auth.token, or a
// token of scope admin; a token of a lesser scope is a ForbiddenError.
func (a *adminHandler) allowed(r *http.Request) error {
	if a.key != "" && httpapi.SameSecret(r.Header.Get(adminKeyHeader), a.key) {
		return nil
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la.Network() == "unix" {
		return nil
	}
	if h := r.Header.Get("Authorization"); h != "" && (a.token != "" || a.tokens.Enabled()) {
		p, err := httpapi.Authenticate(h, a.token, a.tokens)
		if err != nil {
			return err
		}
		if p.Scope < tokens.Admin {
			return report.Errorf(report.Forbidden, "token %s has scope %s; the admin endpoints need scope admin", p.ID, p.Scope)
		}
		return nil
	}
	return report.Errorf(report.Unauthorized,
		"the admin endpoints need a token of scope admin, auth.token, or the admin key from the data directory (reportd backup and reportd token send it)")
}

// adminKeyHeader carries the per-run admin key.
const adminKeyHeader = "X-Reportd-Admin-Key"

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
