// Package replicatest holds the end-to-end test of storage: postgres+s3
// with several replicas: real reportd processes sharing one PostgreSQL
// (internal/testserver) and one versitygw bucket (internal/testserver) behind a
// round-robin reverse proxy on loopback. It has no code outside tests.
package replicatest
