package watch

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Lost events (the kernel's queue overflowed) are made up for by a rescan:
// a file that arrived unseen is found, one already known is left alone.
func TestOverflowRescansAndFindsUnseenFiles(t *testing.T) {
	dir := t.TempDir()
	st, err := openStore(filepath.Join(t.TempDir(), "state.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	flt, _ := newFilter(nil, nil, nil)
	ev := &events{}
	o := &options{roots: []string{dir}, settle: time.Second, maxWait: time.Minute, initialScan: "skip", onSuccess: action{kind: "keep"}}
	r := newRunner(o, nil, st, flt, &eventLog{w: ev, json: true, now: time.Now})
	r.seenCh = make(chan string, 16)

	write(t, filepath.Join(dir, "before.md"), "there at start\n")
	r.start() // no fsnotify: nothing will report the next file
	write(t, filepath.Join(dir, "unseen.md"), "arrived while events were lost\n")
	write(t, filepath.Join(dir, "unseen.tmp"), "ignored\n")
	r.watchError(fsnotify.ErrEventOverflow)

	if ev.count(evOverflow) != 1 || ev.count(evScan) != 1 {
		t.Fatalf("want an overflow and a rescan logged:\n%s", ev)
	}
	if !r.tracker.has(filepath.Join(dir, "unseen.md")) || r.tracker.len() != 1 {
		t.Fatalf("tracker has %d files, want only unseen.md", r.tracker.len())
	}
}
