package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// storagePostgres is the storage setting that keeps the metadata in
// PostgreSQL (internal/pgstore); files stay in data_dir. storagePostgresS3
// keeps the metadata there too, and the files in an S3 bucket (s3.*).
const (
	storagePostgres   = "postgres"
	storagePostgresS3 = "postgres+s3"
)

// onPostgres: the metadata is in PostgreSQL (with or without S3).
func (c *Config) onPostgres() bool {
	meta, _, err := c.stores()
	return err == nil && meta == "postgres"
}

// onS3: the report files and covers are in an S3 bucket.
func (c *Config) onS3() bool {
	_, file, err := c.stores()
	return err == nil && file == "s3"
}

// validateStorage checks that storage:, metadata_store: and file_store:
// agree, and that storage: postgres has exactly one DSN source. Messages
// name keys, never the DSN (it may hold a password).
func (c *Config) validateStorage() error {
	if _, _, err := c.stores(); err != nil {
		return err
	}
	dsn, file := c.Postgres.DSN != "", c.Postgres.DSNFile != ""
	if !c.onPostgres() {
		if dsn || file {
			return fmt.Errorf("postgres.dsn and postgres.dsn_file apply only with storage: postgres or postgres+s3 (storage is %q)", c.storageName())
		}
		return c.validateS3()
	}
	switch {
	case !dsn && !file:
		return fmt.Errorf("storage: %s needs postgres.dsn (env %s) or postgres.dsn_file (env %s)",
			c.storageName(), envName("postgres.dsn"), envName("postgres.dsn_file"))
	case dsn && file:
		return fmt.Errorf("storage: %s takes postgres.dsn (env %s) or postgres.dsn_file (env %s), not both",
			c.storageName(), envName("postgres.dsn"), envName("postgres.dsn_file"))
	}
	return c.validateS3()
}

// validateS3 checks the s3.* keys of storage: postgres+s3: what is
// required is there, credentials come from one source. Messages name keys,
// never values.
func (c *Config) validateS3() error {
	s := c.S3
	if !c.onS3() {
		if s.Endpoint != "" || s.Bucket != "" || s.Prefix != "" || s.AccessKey != "" || s.SecretKey != "" || s.SecretKeyFile != "" {
			return fmt.Errorf("the s3.* keys apply only with storage: postgres+s3 (storage is %q)", c.storageName())
		}
		if s.PresignDownloads {
			return fmt.Errorf("s3.presign_downloads applies only with storage: postgres+s3 (storage is %q)", c.storageName())
		}
		return nil
	}
	var missing []string
	if s.Endpoint == "" {
		missing = append(missing, "s3.endpoint (env "+envName("s3.endpoint")+")")
	}
	if s.Bucket == "" {
		missing = append(missing, "s3.bucket (env "+envName("s3.bucket")+")")
	}
	if s.AccessKey == "" {
		missing = append(missing, "s3.access_key (env "+envName("s3.access_key")+" or AWS_ACCESS_KEY_ID)")
	}
	if s.SecretKey == "" && s.SecretKeyFile == "" {
		missing = append(missing, "s3.secret_key or s3.secret_key_file (env "+envName("s3.secret_key")+", "+envName("s3.secret_key_file")+" or AWS_SECRET_ACCESS_KEY)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("storage: postgres+s3 needs %s", strings.Join(missing, ", "))
	}
	if s.SecretKey != "" && s.SecretKeyFile != "" {
		return errors.New("storage: postgres+s3 takes s3.secret_key or s3.secret_key_file, not both")
	}
	if s.PartSize < s3store.MinPartSize {
		return fmt.Errorf("s3.part_size must be at least 5MiB (S3's smallest part), not %d bytes", s.PartSize)
	}
	if err := blob.CheckPrefix(s.Prefix); err != nil {
		return fmt.Errorf("s3.prefix: %w", err)
	}
	if s.PresignTTL < minPresignTTL || s.PresignTTL > maxPresignTTL {
		return fmt.Errorf("s3.presign_ttl must be between %v and %v, not %v", minPresignTTL, maxPresignTTL, s.PresignTTL)
	}
	return nil
}

// The bounds of s3.presign_ttl: S3 signs for at most 7 days; reportd keeps
// a presigned download a short capability.
const (
	minPresignTTL = time.Minute
	maxPresignTTL = 12 * time.Hour
)

// awsCredentials fills the S3 credentials of storage: postgres+s3 from the
// standard AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY when no s3.* key
// gives them.
func (c *Config) awsCredentials(environ []string) {
	if !c.onS3() {
		return
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "AWS_ACCESS_KEY_ID" && c.S3.AccessKey == "":
			c.S3.AccessKey = value
		case name == "AWS_SECRET_ACCESS_KEY" && c.S3.SecretKey == "" && c.S3.SecretKeyFile == "":
			c.S3.SecretKey = value
		}
	}
}

// openS3 opens the file store of storage: postgres+s3 and checks that the
// bucket answers. Errors name keys and the endpoint and bucket, never the
// secret key; one that may pass on its own (no answer) is a transient
// dependencyError, which start-up waits out.
func openS3(ctx context.Context, c Config) (*s3store.Store, error) {
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

// postgresDSN is the DSN from postgres.dsn or the file postgres.dsn_file
// names (surrounding white space trimmed).
func (c *Config) postgresDSN() (string, error) {
	if c.Postgres.DSNFile == "" {
		return c.Postgres.DSN, nil
	}
	b, err := os.ReadFile(c.Postgres.DSNFile)
	if err != nil {
		return "", fmt.Errorf("postgres.dsn_file: %w", err)
	}
	dsn := strings.TrimSpace(string(b))
	if dsn == "" {
		return "", fmt.Errorf("postgres.dsn_file: %s is empty", c.Postgres.DSNFile)
	}
	return dsn, nil
}

// openPostgres opens the metadata store of storage: postgres. pgx errors
// can quote the connection string, so the error keeps only its class.
func openPostgres(ctx context.Context, c Config, clock report.Clock) (*pgstore.Store, error) {
	dsn, err := c.postgresDSN()
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

// errPostgresBackup is what backup and restore answer with storage: postgres.
var errPostgresBackup = errors.New("backup of a postgres deployment: pg_dump the database and copy the data directory (with postgres+s3, keep bucket versioning or replication on); see docs/scale-out.md (reportd backup and restore handle storage: bolt only)")

// On PostgreSQL, site GC never runs while another daemon ingests.
var _ service.SiteLocker = (*pgstore.Store)(nil)
