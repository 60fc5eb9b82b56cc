package config

import "fmt"

// The names of the two stores (metadata_store:, file_store:) and the
// storage: shorthand for them; the stores themselves are opened by
// daemon's registry (internal/daemon/stores.go).

// storageShorthands are the values of storage:, each a metadata store and
// a file store.
var storageShorthands = map[string][2]string{
	"bolt":        {"bolt", "local"},
	"postgres":    {"postgres", "local"},
	"postgres+s3": {"postgres", "s3"},
}

// Unset metadata_store and file_store (and no storage:) mean these.
const (
	defaultMetaStore = "bolt"
	defaultFileStore = "local"
)

// Stores resolves storage:, metadata_store: and file_store: to the names
// of the two stores. A key the shorthand contradicts is an error naming
// both values; metadata_store: bolt with file_store: s3 is refused (the
// bucket's sweep and shared PDF cache lock through PostgreSQL).
func (c *Config) Stores() (meta, file string, err error) {
	meta, file = c.MetadataStore, c.FileStore
	if c.Storage != "" {
		pair, ok := storageShorthands[c.Storage]
		if !ok {
			return "", "", fmt.Errorf("storage must be bolt, postgres or postgres+s3, not %q", c.Storage)
		}
		if meta != "" && meta != pair[0] {
			return "", "", fmt.Errorf("storage: %s and metadata_store: %s disagree (storage: %s means metadata_store: %s, file_store: %s): set one or the other", c.Storage, meta, c.Storage, pair[0], pair[1])
		}
		if file != "" && file != pair[1] {
			return "", "", fmt.Errorf("storage: %s and file_store: %s disagree (storage: %s means metadata_store: %s, file_store: %s): set one or the other", c.Storage, file, c.Storage, pair[0], pair[1])
		}
		meta, file = pair[0], pair[1]
	}
	if meta == "" {
		meta = defaultMetaStore
	}
	if file == "" {
		file = defaultFileStore
	}
	if meta == "bolt" && file == "s3" {
		return "", "", fmt.Errorf("metadata_store: bolt with file_store: s3 is not supported: the bucket's sweep and its shared PDF cache take their locks in PostgreSQL; use metadata_store: postgres (storage: postgres+s3)")
	}
	return meta, file, nil
}

// StorageName is the stores as one name for messages and logs: the
// storage: shorthand they amount to ("bolt", "postgres", "postgres+s3").
func (c *Config) StorageName() string {
	meta, file, err := c.Stores()
	if err != nil {
		return c.Storage
	}
	for name, pair := range storageShorthands {
		if pair == [2]string{meta, file} {
			return name
		}
	}
	return meta + "+" + file
}
