package daemon

import (
	"context"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/testserver"
)

// TestStorageKeys: metadata_store and file_store choose the stores on their
// own or through the storage: shorthand; a shorthand that contradicts
// either key, and bolt with s3, stop loading with both values named.
func TestStorageKeys(t *testing.T) {
	s3 := []string{"REPORTD_S3_ENDPOINT=h:1", "REPORTD_S3_BUCKET=b", "REPORTD_S3_ACCESS_KEY=a", "REPORTD_S3_SECRET_KEY=s"}
	dsn := "REPORTD_POSTGRES_DSN=postgres://a@b/c"
	for _, tc := range []struct {
		name       string
		env        []string
		meta, file string // "" with wantErr
		name2      string // storageName
		wantErr    []string
	}{
		{name: "defaults", meta: "bolt", file: "local", name2: "bolt"},
		{name: "metadata_store alone", env: []string{"REPORTD_METADATA_STORE=postgres", dsn}, meta: "postgres", file: "local", name2: "postgres"},
		{name: "both keys", env: append([]string{"REPORTD_METADATA_STORE=postgres", "REPORTD_FILE_STORE=s3", dsn}, s3...), meta: "postgres", file: "s3", name2: "postgres+s3"},
		{name: "shorthand", env: append([]string{"REPORTD_STORAGE=postgres+s3", dsn}, s3...), meta: "postgres", file: "s3", name2: "postgres+s3"},
		{name: "shorthand and keys agree", env: []string{"REPORTD_STORAGE=postgres", "REPORTD_METADATA_STORE=postgres", "REPORTD_FILE_STORE=local", dsn}, meta: "postgres", file: "local", name2: "postgres"},
		{name: "shorthand contradicts metadata_store", env: []string{"REPORTD_STORAGE=postgres+s3", "REPORTD_METADATA_STORE=bolt"},
			wantErr: []string{"storage: postgres+s3", "metadata_store: bolt", "disagree"}},
		{name: "shorthand contradicts file_store", env: []string{"REPORTD_STORAGE=bolt", "REPORTD_FILE_STORE=s3"},
			wantErr: []string{"storage: bolt", "file_store: s3", "disagree"}},
		{name: "bolt with s3", env: append([]string{"REPORTD_FILE_STORE=s3"}, s3...),
			wantErr: []string{"metadata_store: bolt", "file_store: s3", "not supported", "metadata_store: postgres"}},
		{name: "unknown metadata store", env: []string{"REPORTD_METADATA_STORE=mysql"},
			wantErr: []string{"REPORTD_METADATA_STORE", "bolt or postgres", "mysql"}},
		{name: "s3 keys without file_store: s3", env: append([]string{"REPORTD_METADATA_STORE=postgres", dsn}, s3...),
			wantErr: []string{"s3.* keys apply only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadArgs(t, tc.env)
			if len(tc.wantErr) > 0 {
				for _, w := range tc.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("want an error with %q, got %v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			meta, file, err := c.Stores()
			if err != nil || meta != tc.meta || file != tc.file || c.StorageName() != tc.name2 {
				t.Fatalf("stores %q, %q (%v), name %q; want %q, %q, %q", meta, file, err, c.StorageName(), tc.meta, tc.file, tc.name2)
			}
			if metaBackendOf(&c).name != meta || fileBackendOf(&c).name != file {
				t.Fatalf("registry entries %q, %q for %q, %q", metaBackendOf(&c).name, fileBackendOf(&c).name, meta, file)
			}
		})
	}
}

// TestMetadataStoreKeyOpensPostgres: metadata_store: postgres without the
// shorthand opens a real PostgreSQL store through the registry, and Open
// refuses a contradicting shorthand before it touches anything.
func TestMetadataStoreKeyOpensPostgres(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.MetadataStore, c.Postgres.DSN = "postgres", testserver.DSN(t)
	m, stop := startServer(t, c)
	defer stop()
	if _, ok := m.MetaStore().(*pgstore.Store); !ok {
		t.Fatalf("metadata_store: postgres opened %T", m.MetaStore())
	}

	bad := testConfig(t, t.TempDir())
	bad.Storage, bad.MetadataStore = "bolt", "postgres"
	err := (&Server{Config: bad}).Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "storage: bolt") || !strings.Contains(err.Error(), "metadata_store: postgres") {
		t.Fatalf("Open with a contradicting shorthand: %v", err)
	}
}
