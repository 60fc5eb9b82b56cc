package site

import (
	"fmt"
	"testing"
)

// A batch stops looking up most keys of small files once lookWindow
// lookups found fewer than one in lookHitRatio stored, keeps sampling,
// and looks up every key again soon after the samples find stored files,
// however long the run of new ones was. Large files, and every file
// without a batch (S3), are always looked up.
func TestLookFirstPolicy(t *testing.T) {
	e := newEnv(t)
	p := &putter{batch: e.store.NewBatch()}
	defer p.batch.Discard()
	looks := func(n int, hit bool) (looked int) {
		for range n {
			if p.lookFirst(true) {
				looked++
				if hit {
					p.mu.Lock()
					p.found++
					p.mu.Unlock()
				}
			}
		}
		return looked
	}
	if n := looks(lookWindow, false); n != lookWindow {
		t.Fatalf("%d of the first %d keys looked up, want all", n, lookWindow)
	}
	if n := looks(10*lookHitRatio, false); n != 10 {
		t.Fatalf("after %d misses, %d of %d keys looked up, want 10 (one in %d)", lookWindow, n, 10*lookHitRatio, lookHitRatio)
	}
	for range 10 {
		if !p.lookFirst(false) {
			t.Fatal("a large file's lookup was skipped")
		}
	}
	looks(100*lookWindow, false) // a long run of new files
	// Stored files again: the samples find them, and lookups resume
	// within a bound that does not grow with the run before.
	resumed := -1
	for i := range 4 * lookWindow {
		if p.lookFirst(true) {
			p.mu.Lock()
			p.found++
			p.mu.Unlock()
		}
		p.mu.Lock()
		back := p.found*lookHitRatio >= p.looked
		p.mu.Unlock()
		if back {
			resumed = i
			break
		}
	}
	if resumed < 0 {
		t.Fatalf("lookups not resumed within %d stored files after a run of %d new ones", 4*lookWindow, 100*lookWindow)
	}
	if n := looks(2*lookHitRatio, true); n != 2*lookHitRatio {
		t.Fatalf("after resuming (%d files later), %d of %d keys looked up, want all", resumed, n, 2*lookHitRatio)
	}

	s3 := &putter{}
	for range lookWindow + 10*lookHitRatio {
		if !s3.lookFirst(true) {
			t.Fatal("a Put store (S3) skipped a lookup")
		}
	}
}

// An upload whose first files are all new and whose later ones are stored
// already (the lookups skipped, then resumed) stores exactly the new
// objects, and every file reads back.
func TestIngestNewFilesThenStored(t *testing.T) {
	e := newEnv(t)
	var old, mixed []ent
	for i := range 3 * lookWindow {
		old = append(old, ent{name: fmt.Sprintf("site/b-%04d.html", i), body: fmt.Sprintf("<p>kept %d</p>", i)})
	}
	for i := range lookWindow + 8*lookHitRatio {
		mixed = append(mixed, ent{name: fmt.Sprintf("site/a-%04d.html", i), body: fmt.Sprintf("<p>new %d</p>", i)})
	}
	mixed = append(mixed, old...)
	mixed = append(mixed, ent{name: "site/index.html", body: "<html>2</html>"})
	old = append(old, ent{name: "site/index.html", body: "<html>1</html>"})
	if _, err := e.ingest(t, tarOf(t, old), Options{ManifestKey: "sites/1.json"}); err != nil {
		t.Fatal(err)
	}
	m, err := e.ingest(t, tarOf(t, mixed), Options{ManifestKey: "sites/2.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != len(mixed) {
		t.Fatalf("%d files in the manifest, want %d", len(m.Files), len(mixed))
	}
	for _, want := range mixed {
		f, ok := m.Lookup(want.name[len("site/"):])
		if !ok || read(t, e.store, f.Key()) != want.body {
			t.Fatalf("%s does not read back", want.name)
		}
	}
	if n, want := len(e.keys(t, ObjectPrefix)), len(old)+lookWindow+8*lookHitRatio+1; n != want {
		t.Errorf("%d objects stored, want %d (each distinct content once)", n, want)
	}
	e.store.Settle()
	if ents, _ := e.tmpEntries(); len(ents) != 0 {
		t.Errorf("temp files left: %v", ents)
	}
}
