package watch

import (
	"io/fs"
	"os"
	"testing"
	"time"
)

// fakeFS is the tracker's view of files: size and mtime per path.
type fakeFS map[string]fakeInfo

type fakeInfo struct {
	size  int64
	mtime time.Time
}

func (f fakeInfo) Name() string       { return "f" }
func (f fakeInfo) Size() int64        { return f.size }
func (f fakeInfo) Mode() fs.FileMode  { return 0o644 }
func (f fakeInfo) ModTime() time.Time { return f.mtime }
func (f fakeInfo) IsDir() bool        { return false }
func (f fakeInfo) Sys() any           { return nil }

func (m fakeFS) stat(p string) (fs.FileInfo, error) {
	if fi, ok := m[p]; ok {
		return fi, nil
	}
	return nil, os.ErrNotExist
}

func paths(rs []ready) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.path)
	}
	return out
}

func TestTrackerWaitsForStability(t *testing.T) {
	t0 := time.Unix(1000, 0)
	files := fakeFS{"/a": {1, t0}}
	tr := newTracker(2*time.Second, time.Minute)
	tr.stat = files.stat
	tr.touch("/a", t0)

	// The file grows every second: never settled.
	for i := 1; i <= 5; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		files["/a"] = fakeInfo{int64(i + 1), now}
		if got := tr.due(now); len(got) != 0 {
			t.Fatalf("ready while growing at %ds: %v", i, paths(got))
		}
	}
	// Unchanged since 5s: not ready at 6s, ready at 7s.
	if got := tr.due(t0.Add(6 * time.Second)); len(got) != 0 {
		t.Fatalf("ready after 1s of quiet: %v", paths(got))
	}
	got := tr.due(t0.Add(7 * time.Second))
	if len(got) != 1 || got[0].path != "/a" || got[0].size != 6 || got[0].forced {
		t.Fatalf("due = %+v, want /a size 6 unforced", got)
	}
	if !tr.empty() {
		t.Fatal("a ready file stayed tracked")
	}
}

func TestTrackerEventResetsClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	files := fakeFS{"/a": {1, t0}}
	tr := newTracker(2*time.Second, time.Minute)
	tr.stat = files.stat
	tr.touch("/a", t0)
	tr.due(t0.Add(time.Second))
	// A write whose mtime did not move (coarse timestamps) still counts.
	tr.touch("/a", t0.Add(1500*time.Millisecond))
	if got := tr.due(t0.Add(2500 * time.Millisecond)); len(got) != 0 {
		t.Fatalf("ready 1s after an event: %v", paths(got))
	}
	if got := tr.due(t0.Add(3500 * time.Millisecond)); len(got) != 1 {
		t.Fatalf("not ready 2s after the last event")
	}
}

func TestTrackerMaxWait(t *testing.T) {
	t0 := time.Unix(1000, 0)
	files := fakeFS{"/log.md": {1, t0}}
	tr := newTracker(2*time.Second, 10*time.Second)
	tr.stat = files.stat
	tr.touch("/log.md", t0)
	var got []ready
	for i := 1; i <= 12 && len(got) == 0; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		files["/log.md"] = fakeInfo{int64(i), now}
		got = tr.due(now)
		if len(got) > 0 && i < 10 {
			t.Fatalf("let go after %ds, before --max-wait", i)
		}
	}
	if len(got) != 1 || !got[0].forced {
		t.Fatalf("a file that keeps changing was not let go by max-wait: %+v", got)
	}
}

func TestTrackerDropsVanishedAndRescanKeepsClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	files := fakeFS{"/a": {1, t0}, "/b": {1, t0}}
	tr := newTracker(2*time.Second, time.Minute)
	tr.stat = files.stat
	tr.touch("/a", t0)
	tr.touch("/b", t0)
	delete(files, "/a")
	tr.due(t0.Add(time.Second))
	if tr.has("/a") {
		t.Fatal("a vanished file stayed tracked")
	}
	// A rescan must not restart /b's clock.
	if tr.addSince("/b", files["/b"], t0.Add(1900*time.Millisecond), t0.Add(1900*time.Millisecond)) {
		t.Fatal("addSince re-added a tracked file")
	}
	if got := tr.due(t0.Add(2 * time.Second)); len(got) != 1 || got[0].path != "/b" {
		t.Fatalf("due = %v, want /b", paths(got))
	}
	// A scanned file that has been quiet for long is ready at the next look.
	files["/c"] = fakeInfo{5, t0}
	tr.addSince("/c", files["/c"], t0, t0.Add(time.Hour))
	if got := tr.due(t0.Add(time.Hour)); len(got) != 1 {
		t.Fatal("an old, quiet file was not ready at once")
	}
}

func TestTrackerWaitsForOpenWriters(t *testing.T) {
	t0 := time.Unix(1000, 0)
	files := fakeFS{"/a": {1, t0}}
	open := true
	tr := newTracker(time.Second, time.Minute)
	tr.stat = files.stat
	tr.busy = func(ps []string) map[string]bool { return map[string]bool{"/a": open} }
	tr.touch("/a", t0)
	if got := tr.due(t0.Add(5 * time.Second)); len(got) != 0 {
		t.Fatal("ready while a writer holds it open")
	}
	open = false
	if got := tr.due(t0.Add(5*time.Second + busyEvery)); len(got) != 1 || got[0].forced {
		t.Fatalf("not ready once the writer closed it: %+v", got)
	}
}
