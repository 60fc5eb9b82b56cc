package boltstore

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Every bucket the store uses. Keys that are ids are 8-byte big-endian, so
// cursor order is id order.
var (
	// bucketMeta holds keyStorageVersion.
	bucketMeta = []byte("meta")
	// bucketProjects: project id -> projectRow. Its sequence issues project ids.
	bucketProjects = []byte("projects")
	// bucketReports: report id -> reportRow. Its sequence issues report ids.
	bucketReports = []byte("reports")
	// bucketProjectReports: project id ‖ report id -> nil; the per-project index.
	bucketProjectReports = []byte("project_reports")
	// bucketProjectDays: project id ‖ "YYYYMMDD" -> uint64 count of reports
	// uploaded that day (in the daemon's zone); gives todayNewReports.
	bucketProjectDays = []byte("project_days")

	allBuckets = [][]byte{bucketMeta, bucketProjects, bucketReports, bucketProjectReports, bucketProjectDays, bucketLatest,
		bucketTokens, bucketLatestName, bucketLatestBranch, bucketLatestNameType, bucketLatestNameTypeBranch, bucketProjectSlugs,
		bucketSecrets, bucketIdempotency, bucketResults}
)

var keyStorageVersion = []byte("storage_version")

// storageVersion is the schema this code reads and writes. A newer file is
// refused; an older one would be migrated here, step by step.
// Version 2 added bucketLatest (latest.go), version 3 bucketTokens
// (tokens.go), version 4 bucketLatestName and bucketLatestBranch (latest_by.go),
// version 5 site reports (report rows with kind, entry, files and bytes:
// the rows of older versions are all single files and read unchanged, but
// an older build must not open a store with sites, which it would serve as
// files), version 6 the name + type latest indexes (latest_by.go) and
// project slugs (slugs.go), both back-filled from the rows, version 7
// bucketSecrets (secrets.go: the content signing key) and bucketIdempotency
// (idempotency.go: Idempotency-Key of uploads), version 8 bucketResults
// (results.go: per-test results; `reportd backfill-results` fills it for
// older reports).
const storageVersion uint64 = 8

// upgrades[v] takes a store from version v to v+1; the buckets exist already.
var upgrades = map[uint64]struct {
	what string
	step func(*bolt.Tx) error
}{
	1: {"build the latest index", buildLatest},
	2: {"the tokens bucket", tokensUpgrade},
	3: {"build the latest-by-name and latest-by-branch indexes", buildLatestBy},
	4: {"site reports (new optional report fields)", func(*bolt.Tx) error { return nil }},
	5: {"build the latest-by-name-and-type indexes and give every project a slug", func(tx *bolt.Tx) error {
		if err := buildLatestNameType(tx); err != nil {
			return err
		}
		return buildSlugs(tx)
	}},
	6: {"the secrets and idempotency buckets", func(*bolt.Tx) error { return nil }},
	7: {"the per-test results bucket", func(*bolt.Tx) error { return nil }},
}

func initSchema(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	meta := tx.Bucket(bucketMeta)
	v := meta.Get(keyStorageVersion)
	switch {
	case v == nil:
		return meta.Put(keyStorageVersion, u64(storageVersion))
	case len(v) != 8:
		return fmt.Errorf("corrupt storage version %x", v)
	case binary.BigEndian.Uint64(v) > storageVersion:
		return fmt.Errorf("store has storage version %d, this build reads up to %d: upgrade reportd", binary.BigEndian.Uint64(v), storageVersion)
	}
	have := binary.BigEndian.Uint64(v)
	for n := have; n < storageVersion; n++ {
		up, ok := upgrades[n]
		if !ok {
			return fmt.Errorf("store has storage version %d, which this build cannot upgrade", n)
		}
		if err := up.step(tx); err != nil {
			return fmt.Errorf("storage version %d: %s: %w", n+1, up.what, err)
		}
	}
	if have != storageVersion {
		return meta.Put(keyStorageVersion, u64(storageVersion))
	}
	return nil
}

func u64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}

func idKey(id int64) []byte { return u64(uint64(id)) }

func pairKey(a, b int64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, uint64(a))
	binary.BigEndian.PutUint64(k[8:], uint64(b))
	return k
}

func dayKey(project int64, day string) []byte {
	return append(idKey(project), day...)
}
