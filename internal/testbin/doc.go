// Package testbin builds the real reportd and reportctl binaries and runs
// `reportd serve` on a loopback port, for the end-to-end tests and the
// benchmarks that drive the shipped programs rather than the packages
// in-process. It is a plain package, not a _test file, so that bench/
// commands can use it too.
package testbin
