package watch

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStoreSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "state.db")
	s, err := openStore(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := s.enqueue([]string{"/d/a.md", "/d/b.md", "/d/c.md"}, now); err != nil {
		t.Fatal(err)
	}
	q, err := s.noteFailure("/d/b.md", true, false, "bad pdf", now)
	if err != nil || q.Tries != 1 || q.Rejections != 1 {
		t.Fatalf("noteFailure = %+v, %v", q, err)
	}
	// enqueue again keeps the counts.
	_ = s.enqueue([]string{"/d/b.md"}, now)
	if err := s.markPublished("/d/a.md", published{Size: 3, MTime: 7, SHA256: "abc", ReportID: 9, ProjectID: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.markFailed("/d/c.md", failed{Size: 4, MTime: 8, SHA256: "def", Error: "nope"}); err != nil {
		t.Fatal(err)
	}
	_ = s.oweDelete(41)
	_ = s.oweDelete(42)
	_ = s.paidDelete(41)
	if err := s.close(); err != nil {
		t.Fatal(err)
	}

	s, err = openStore(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	queue := s.queue()
	if len(queue) != 1 || queue["/d/b.md"].Rejections != 1 || queue["/d/b.md"].LastError != "bad pdf" {
		t.Fatalf("queue after reopen = %+v, want only b.md with its rejection", queue)
	}
	rec, ok := s.published("/d/a.md")
	if !ok || rec.ReportID != 9 || rec.SHA256 != "abc" {
		t.Fatalf("published = %+v, %v", rec, ok)
	}
	stats := s.fileStats()
	if stats["/d/a.md"] != (stat{3, 7}) || stats["/d/c.md"] != (stat{4, 8}) || len(stats) != 2 {
		t.Fatalf("fileStats = %v", stats)
	}
	if d := s.owedDeletes(); len(d) != 1 || d[0] != 42 {
		t.Fatalf("owed deletes = %v, want [42]", d)
	}
	if err := s.touchPublished("/d/a.md", 3, 99); err != nil {
		t.Fatal(err)
	}
	if rec, _ := s.published("/d/a.md"); rec.MTime != 99 || rec.ReportID != 9 {
		t.Fatalf("touchPublished lost the record: %+v", rec)
	}
}

func TestStoreSecondWatcherFailsFast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := openStore(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	_, err = openStore(path, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second open: %v, want an in-use error", err)
	}
}

func TestStoreSHAIndexFollowsMoves(t *testing.T) {
	s, err := openStore(filepath.Join(t.TempDir(), "state.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	_ = s.markPublished("/d/a.md", published{SHA256: "aaa", ReportID: 1})
	_ = s.markPublished("/d/b.md", published{SHA256: "aaa", ReportID: 2})
	_ = s.markPublished("/d/c.md", published{SHA256: "ccc", ReportID: 3})
	// New content for b: its old hash no longer points at it.
	_ = s.markPublished("/d/b.md", published{SHA256: "bbb", ReportID: 4})
	if got := s.pathsWithSHA("aaa"); len(got) != 1 || got[0] != "/d/a.md" {
		t.Fatalf("aaa → %v, want [/d/a.md]", got)
	}
	rec, err := s.moved("/d/a.md", "/d/sub/a.md", 5, 6)
	if err != nil || rec.ReportID != 1 || rec.Size != 5 {
		t.Fatalf("moved = %+v, %v", rec, err)
	}
	if got := s.pathsWithSHA("aaa"); len(got) != 1 || got[0] != "/d/sub/a.md" {
		t.Fatalf("after the move aaa → %v", got)
	}
	if _, ok := s.published("/d/a.md"); ok {
		t.Fatal("the old path kept its record")
	}
	if _, err := s.moved("/d/a.md", "/d/x.md", 1, 1); err == nil {
		t.Fatal("a record was taken over twice")
	}
}
