package daemon

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// The shipped unit must let bubblewrap mount each engine's own /proc.
// systemd implements ProtectKernelTunables= and ProtectKernelLogs= with
// mounts over parts of /proc, and the kernel then refuses an unprivileged
// user namespace a fresh proc mount ("bwrap: Can't mount proc on
// /newroot/proc: Operation not permitted"): the sandbox probe fails and every
// conversion is refused. ProcSubset=pid would hide /proc/meminfo and
// /proc/sys, which the engines read. (examples/systemd/verify-hardening.sh
// with PROTECT_KERNEL=1 shows the failure on a real kernel.)
func TestSystemdUnitLetsBwrapMountProc(t *testing.T) {
	f, err := os.Open("../../examples/systemd/reportd.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			set[k] = v
		}
	}
	for _, k := range []string{"ProtectKernelTunables", "ProtectKernelLogs"} {
		if v, ok := set[k]; !ok || v != "no" {
			t.Errorf("%s=%q: must be set to no, or bwrap cannot mount /proc for the engines", k, v)
		}
	}
	if v := set["ProcSubset"]; v == "pid" {
		t.Error("ProcSubset=pid hides /proc files the engines read")
	}
	if v := set["ProtectProc"]; v != "invisible" {
		t.Errorf("ProtectProc=%q, want invisible (a mount option of /proc, which bwrap tolerates)", v)
	}
}
