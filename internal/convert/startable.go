package convert

import "github.com/reportd/reportd/internal/report"

// Startable says, per engine, why it could not start here (nil: it can):
// its programs are installed and the sandbox probe passed (or
// convert.unsandboxed allows running without it). It starts no engine;
// the sandbox probe runs once per Manager. For readiness: an engine need
// not be running to be ready, only startable.
func (m *Manager) Startable() map[string]error {
	return map[string]error{
		"chromium": plain(m.chrome.Usable()),
		"office":   plain(m.office.Usable()),
	}
}

// plain is err's client-facing message as an error (nil stays nil).
func plain(err error) error {
	if err == nil {
		return nil
	}
	return report.Errorf(report.KindOf(err), "%s", report.MessageOf(err))
}
