package pgstore

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reportd/reportd/internal/report"
)

// errUnavailable is what a request hears while the database cannot be
// reached: a ServiceUnavailableError (503 with Retry-After in the
// conventional status mode), never a StorageError, so monitoring and
// clients can tell an outage from a broken store.
const errUnavailable = "the metadata store (PostgreSQL) is unavailable; try again shortly"

// Unreachable reports whether err says the database could not be reached
// or went away: no connection, a connection dropped or timed out, a server
// shutting down or starting up, or out of connection slots. Errors about
// the request itself (a constraint, a syntax error) are not outages.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// The server answered. A wrong password (28xxx) or database
		// (3D000) is configuration, not an outage that will pass.
		switch {
		case strings.HasPrefix(pe.Code, "08"): // connection_exception
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // admin/crash shutdown, cannot connect now
			return true
		case pe.Code == "53300": // too_many_connections
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true // refused, unreachable, timed out, closed during the handshake
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	// pgconn marks errors after which nothing reached the server.
	if pgconn.SafeToRetry(err) {
		return true
	}
	return strings.Contains(err.Error(), "conn closed")
}

// storeErr is report.StoreError with outages told apart.
func storeErr(err error) error {
	if err == nil {
		return nil
	}
	var e *report.Error
	if !errors.As(err, &e) && Unreachable(err) {
		return report.Wrap(report.Unavailable, err, errUnavailable)
	}
	return report.StoreError(err)
}
