// Package report holds the domain of the Report Publishing Service: projects,
// reports, file types, error kinds, and the Service interface that both the
// daemon (internal/service) and the HTTP client (internal/client) implement.
// It does no I/O, so every other package can depend on it.
package report
