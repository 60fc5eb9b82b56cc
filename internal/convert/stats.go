package convert

// EngineRSS returns the resident memory, in bytes, of the running engines:
// "chromium" (the browser and all its helper processes) and "office" (every
// worker's helper and soffice). For benchmarks and monitoring.
func (m *Manager) EngineRSS() map[string]int64 {
	out := map[string]int64{}
	m.chrome.mu.Lock()
	if b := m.chrome.cur; b != nil {
		out["chromium"] = treeRSS(b.pid)
	}
	m.chrome.mu.Unlock()
	var office int64
	for _, w := range m.office.workers {
		office += treeRSS(int(w.pid.Load()))
	}
	out["office"] = office
	return out
}
