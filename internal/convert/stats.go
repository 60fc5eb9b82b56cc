package convert

import "github.com/reportd/reportd/internal/convert/engine"

// EngineRSS returns the resident memory, in bytes, of the running engines:
// "chromium" (the browser and all its helper processes) and "office" (every
// worker's helper and soffice). For benchmarks and monitoring.
func (m *Manager) EngineRSS() map[string]int64 {
	out := map[string]int64{}
	pid := 0
	if b, ok := m.chrome.Supervisor().Current(); ok {
		pid = b.RootPID()
	}
	out["chromium"] = engine.TreeRSS(pid) // outside the lock: reading /proc takes a while
	out["office"] = m.office.RSS()
	return out
}
