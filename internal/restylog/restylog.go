// Package restylog holds the resty logger reportctl's HTTP clients use.
package restylog

// Silent is resty's logger, silenced: resty would print its own "ERROR
// RESTY ..." and "WARN RESTY ..., Attempt n" lines on stderr beside the
// one message reportctl gives for a failed request (the API client's
// error, the PR comment's warning).
type Silent struct{}

func (Silent) Errorf(string, ...any) {}
func (Silent) Warnf(string, ...any)  {}
func (Silent) Debugf(string, ...any) {}
