package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// storagePostgres is the storage setting that keeps the metadata in
// PostgreSQL (internal/pgstore); files stay in data_dir.
const storagePostgres = "postgres"

func (c *Config) onPostgres() bool { return c.Storage == storagePostgres }

// validateStorage checks that storage: postgres has exactly one DSN source.
// Messages name keys, never the DSN (it may hold a password).
func (c *Config) validateStorage() error {
	dsn, file := c.Postgres.DSN != "", c.Postgres.DSNFile != ""
	if !c.onPostgres() {
		if dsn || file {
			return fmt.Errorf("postgres.dsn and postgres.dsn_file apply only with storage: postgres (storage is %q)", c.Storage)
		}
		return nil
	}
	switch {
	case !dsn && !file:
		return fmt.Errorf("storage: postgres needs postgres.dsn (env %s) or postgres.dsn_file (env %s)",
			envName("postgres.dsn"), envName("postgres.dsn_file"))
	case dsn && file:
		return fmt.Errorf("storage: postgres takes postgres.dsn (env %s) or postgres.dsn_file (env %s), not both",
			envName("postgres.dsn"), envName("postgres.dsn_file"))
	}
	return nil
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
		return nil, errors.New(scrubDSN(fmt.Sprintf("storage: postgres: cannot open the database of %s: %s", key, msg), dsn))
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
var errPostgresBackup = errors.New("backup of a postgres deployment: pg_dump the database and copy the data directory; see docs/scale-out.md (reportd backup and restore handle storage: bolt only)")

// errPostgresTokens is what the token commands and /admin/tokens answer
// with storage: postgres: the token store is the bbolt file's.
var errPostgresTokens = errors.New("scoped tokens are not available with storage: postgres yet (they live in the bbolt store); use auth.token; see docs/scale-out.md")

// errPostgresCheck is what reportd check answers with storage: postgres.
var errPostgresCheck = errors.New("reportd check works on storage: bolt only; with storage: postgres the counters are kept in the database's transactions (see docs/scale-out.md)")

// noTokens is the empty token store of storage: postgres: nothing is
// enabled and nothing can be created.
type noTokens struct{}

func (noTokens) Tokens() ([]tokens.Record, error) { return nil, nil }
func (noTokens) PutToken(tokens.Record) error     { return errPostgresTokens }

var _ tokens.Store = noTokens{}
