// Package replicatest holds the end-to-end test of storage: postgres+s3
// with several replicas: real reportd processes sharing one PostgreSQL
// (internal/pgtest) and one versitygw bucket (internal/s3test) behind a
// round-robin reverse proxy on loopback. It has no code outside tests.
package replicatest
