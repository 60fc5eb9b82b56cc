package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/s3store"
)

// StoragePostgres is the storage setting that keeps the metadata in
// PostgreSQL (internal/pgstore); files stay in data_dir. StoragePostgresS3
// keeps the metadata there too, and the files in an S3 bucket (s3.*).
const (
	StoragePostgres   = "postgres"
	StoragePostgresS3 = "postgres+s3"
)

// OnPostgres: the metadata is in PostgreSQL (with or without S3).
func (c *Config) OnPostgres() bool {
	meta, _, err := c.Stores()
	return err == nil && meta == "postgres"
}

// OnS3: the report files and covers are in an S3 bucket.
func (c *Config) OnS3() bool {
	_, file, err := c.Stores()
	return err == nil && file == "s3"
}

// ValidateStorage checks that storage:, metadata_store: and file_store:
// agree, and that storage: postgres has exactly one DSN source. Messages
// name keys, never the DSN (it may hold a password).
func (c *Config) ValidateStorage() error {
	if _, _, err := c.Stores(); err != nil {
		return err
	}
	dsn, file := c.Postgres.DSN != "", c.Postgres.DSNFile != ""
	if !c.OnPostgres() {
		if dsn || file {
			return fmt.Errorf("postgres.dsn and postgres.dsn_file apply only with storage: postgres or postgres+s3 (storage is %q)", c.StorageName())
		}
		return c.validateS3()
	}
	switch {
	case !dsn && !file:
		return fmt.Errorf("storage: %s needs postgres.dsn (env %s) or postgres.dsn_file (env %s)",
			c.StorageName(), envName("postgres.dsn"), envName("postgres.dsn_file"))
	case dsn && file:
		return fmt.Errorf("storage: %s takes postgres.dsn (env %s) or postgres.dsn_file (env %s), not both",
			c.StorageName(), envName("postgres.dsn"), envName("postgres.dsn_file"))
	}
	return c.validateS3()
}

// validateS3 checks the s3.* keys of storage: postgres+s3: what is
// required is there, credentials come from one source. Messages name keys,
// never values.
func (c *Config) validateS3() error {
	s := c.S3
	if !c.OnS3() {
		if s.Endpoint != "" || s.Bucket != "" || s.Prefix != "" || s.AccessKey != "" || s.SecretKey != "" || s.SecretKeyFile != "" {
			return fmt.Errorf("the s3.* keys apply only with storage: postgres+s3 (storage is %q)", c.StorageName())
		}
		if s.PresignDownloads {
			return fmt.Errorf("s3.presign_downloads applies only with storage: postgres+s3 (storage is %q)", c.StorageName())
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
	if s.PresignTTL < MinPresignTTL || s.PresignTTL > MaxPresignTTL {
		return fmt.Errorf("s3.presign_ttl must be between %v and %v, not %v", MinPresignTTL, MaxPresignTTL, s.PresignTTL)
	}
	return nil
}

// The bounds of s3.presign_ttl: S3 signs for at most 7 days; reportd keeps
// a presigned download a short capability.
const (
	MinPresignTTL = time.Minute
	MaxPresignTTL = 12 * time.Hour
)

// awsCredentials fills the S3 credentials of storage: postgres+s3 from the
// standard AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY when no s3.* key
// gives them.
func (c *Config) awsCredentials(environ []string) {
	if !c.OnS3() {
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

// PostgresDSN is the DSN from postgres.dsn or the file postgres.dsn_file
// names (surrounding white space trimmed).
func (c *Config) PostgresDSN() (string, error) {
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
