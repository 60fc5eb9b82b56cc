package convert

import (
	"strings"
	"testing"
)

// TestStartable: readiness asks whether each engine can start here, without
// starting one: a missing program is named with what to install, and a
// working installation (this machine's) starts nothing to say so.
func TestStartable(t *testing.T) {
	m := newManager(t, func(c *Config) { c.ChromiumPath, c.SofficePath = "/nonexistent/chromium", "/nonexistent/soffice" })
	got := m.Startable()
	if err := got["chromium"]; err == nil || !strings.Contains(err.Error(), "install chromium-headless-shell") {
		t.Errorf("chromium missing: %v", err)
	}
	if err := got["office"]; err == nil || !strings.Contains(err.Error(), "install libreoffice-impress-nogui") {
		t.Errorf("LibreOffice missing: %v", err)
	}

	m = newManager(t, nil)
	for name, err := range m.Startable() {
		if err != nil {
			t.Errorf("%s not startable on the test machine: %v", name, err)
		}
	}
	if n := m.chrome.Launches(); n != 0 {
		t.Errorf("Startable launched Chromium %d times", n)
	}
}
