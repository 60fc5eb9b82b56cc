package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// openS3 opens the file store of storage: postgres+s3 and checks that the
// bucket answers. Errors name keys and the endpoint and bucket, never the
// secret key; one that may pass on its own (no answer) is a transient
// dependencyError, which start-up waits out.
func openS3(ctx context.Context, c config.Config) (*s3store.Store, error) {
	secret := c.S3.SecretKey
	if c.S3.SecretKeyFile != "" {
		b, err := os.ReadFile(c.S3.SecretKeyFile)
		if err != nil {
			return nil, fmt.Errorf("s3.secret_key_file: %w", err)
		}
		if secret = strings.TrimSpace(string(b)); secret == "" {
			return nil, fmt.Errorf("s3.secret_key_file: %s is empty", c.S3.SecretKeyFile)
		}
	}
	scrub := func(err error) error {
		return errors.New(strings.ReplaceAll(err.Error(), secret, "<s3.secret_key>"))
	}
	st, err := s3store.New(s3store.Config{
		Endpoint: c.S3.Endpoint, Bucket: c.S3.Bucket, Region: c.S3.Region, Prefix: c.S3.Prefix,
		AccessKey: c.S3.AccessKey, SecretKey: secret, UseTLS: c.S3.TLS, PartSize: int64(c.S3.PartSize),
		TempDir: filepath.Join(c.DataDir, "tmp"), // staged uploads: swept at start-up with the local ones
	})
	if err != nil {
		return nil, scrub(fmt.Errorf("storage: postgres+s3: s3.*: %w", err))
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := st.Probe(cctx); err != nil {
		// The S3 error code tells a wrong key, a wrong secret, a clock
		// that is off and a missing bucket apart (s3store.Problem).
		var p *s3store.Problem
		transient := !errors.As(err, &p) || p.Unreachable
		return nil, &dependencyError{err: scrub(fmt.Errorf("storage: postgres+s3: %w", err)), transient: transient}
	}
	return st, nil
}

// openPostgres opens the metadata store of storage: postgres. pgx errors
// can quote the connection string, so the error keeps only its class.
func openPostgres(ctx context.Context, c config.Config, clock report.Clock) (*pgstore.Store, error) {
	dsn, err := c.PostgresDSN()
	if err != nil {
		return nil, err
	}
	s, err := pgstore.Open(ctx, dsn, clock)
	if err != nil {
		key := "postgres.dsn"
		if c.Postgres.DSNFile != "" {
			key = "postgres.dsn_file"
		}
		msg := strings.TrimPrefix(err.Error(), "postgres: ")
		return nil, &dependencyError{err: errors.New(scrubDSN(fmt.Sprintf("storage: postgres: cannot open the database of %s: %s", key, msg), dsn)),
			transient: pgstore.Unreachable(err)}
	}
	return s, nil
}

// scrubDSN removes the DSN and its password from msg, whatever pgx put in.
func scrubDSN(msg, dsn string) string {
	msg = strings.ReplaceAll(msg, dsn, "<postgres.dsn>")
	for _, pw := range dsnPasswords(dsn) {
		msg = strings.ReplaceAll(msg, pw, "<password>")
	}
	return msg
}

// dsnPasswords are the password parts of a URL or key=value DSN.
func dsnPasswords(dsn string) []string {
	var out []string
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
				out = append(out, pw)
			}
		}
	}
	for _, f := range strings.FieldsFunc(dsn, func(r rune) bool { return r == ' ' || r == '&' || r == '?' }) {
		if v, ok := strings.CutPrefix(f, "password="); ok && v != "" {
			out = append(out, strings.Trim(v, "'"))
		}
	}
	return out
}

// ErrPostgresBackup is what backup and restore answer with storage: postgres.
var ErrPostgresBackup = errors.New("backup of a postgres deployment: pg_dump the database and copy the data directory (with postgres+s3, keep bucket versioning or replication on); see docs/scale-out.md (reportd backup and restore handle storage: bolt only)")

// On PostgreSQL, site GC never runs while another daemon ingests.
var _ service.SiteLocker = (*pgstore.Store)(nil)
