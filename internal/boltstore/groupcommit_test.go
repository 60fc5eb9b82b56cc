package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func openGroupDB(t *testing.T) (*bolt.DB, *groupCommit) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "g.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	return db, &groupCommit{db: db}
}

func put(k string) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte(k), []byte(k)) }
}

func keys(t *testing.T, db *bolt.DB) []string {
	t.Helper()
	var out []string
	db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("b")).ForEach(func(k, _ []byte) error { out = append(out, string(k)); return nil })
	})
	return out
}

// Writers arriving together share transactions; every one is committed
// when do returns, and the groups are fewer than the writers.
func TestGroupCommitSharesTransactions(t *testing.T) {
	db, g := openGroupDB(t)
	const n = 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	txs := map[int]bool{} // write transactions seen, by id
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.do(func(tx *bolt.Tx) error {
				mu.Lock()
				txs[tx.ID()] = true
				mu.Unlock()
				return put(fmt.Sprintf("k%03d", i))(tx)
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := len(keys(t, db)); got != n {
		t.Fatalf("%d keys committed, want %d", got, n)
	}
	if len(txs) >= n {
		t.Fatalf("%d write transactions for %d concurrent writers: none shared", len(txs), n)
	}
	t.Logf("%d writers in %d transactions", n, len(txs))
}

// A lone write is committed by one transaction, running it once.
func TestGroupCommitLoneWrite(t *testing.T) {
	db, g := openGroupDB(t)
	calls := 0
	if err := g.do(func(tx *bolt.Tx) error { calls++; return put("one")(tx) }); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, db); len(got) != 1 || got[0] != "one" || calls != 1 {
		t.Fatalf("keys %v after %d calls", got, calls)
	}
}

// A failing or panicking write gets its own error and leaves nothing
// behind; the writes grouped with it are committed.
func TestGroupCommitFailureIsolated(t *testing.T) {
	db, g := openGroupDB(t)
	// Hold the committer in a transaction so the next writes gather into one group.
	release := make(chan struct{})
	started := make(chan struct{})
	go g.do(func(tx *bolt.Tx) error {
		close(started)
		<-release
		return put("first")(tx)
	})
	<-started
	boom := errors.New("refused")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	writes := []func(*bolt.Tx) error{
		put("a"),
		func(tx *bolt.Tx) error { put("half")(tx); return boom },
		func(tx *bolt.Tx) error { put("half2")(tx); panic("bad write") },
		put("b"),
	}
	for i, w := range writes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = g.do(w) }()
	}
	// Wait until all four are gathered behind the held transaction (a
	// generous bound: the test is about isolation, not speed).
	deadline := time.Now().Add(30 * time.Second)
	for {
		g.mu.Lock()
		n := len(g.next)
		g.mu.Unlock()
		if n == len(writes) {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			wg.Wait() // the writes end before the cleanup closes the database
			t.Fatalf("%d of %d writes gathered behind the held transaction after 30 s", n, len(writes))
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if errs[0] != nil || errs[3] != nil {
		t.Fatalf("good writes failed: %v, %v", errs[0], errs[3])
	}
	if !errors.Is(errs[1], boom) {
		t.Fatalf("failing write: %v", errs[1])
	}
	if errs[2] == nil || !strings.Contains(errs[2].Error(), "panicked") {
		t.Fatalf("panicking write: %v", errs[2])
	}
	got := strings.Join(keys(t, db), ",")
	if got != "a,b,first" {
		t.Fatalf("committed keys %q, want a,b,first (nothing of the failed writes)", got)
	}
}

// A lone write that fails runs once: its failure is its own answer, not
// worth a second run alone.
func TestGroupCommitLoneFailureRunsOnce(t *testing.T) {
	db, g := openGroupDB(t)
	boom := errors.New("refused")
	calls := 0
	err := g.do(func(tx *bolt.Tx) error { calls++; put("half")(tx); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("failing lone write: %v", err)
	}
	if calls != 1 {
		t.Fatalf("failing lone write ran %d times, want 1", calls)
	}
	if got := keys(t, db); len(got) != 0 {
		t.Fatalf("keys %v left by a failed write", got)
	}
}

// A panicking write's error carries the panic's value, and the panic's
// stack, down to the write that panicked, goes to the store's log.
func TestGroupCommitPanicIsLoggedWithStack(t *testing.T) {
	_, g := openGroupDB(t)
	var logged bytes.Buffer
	g.log = slog.New(slog.NewTextHandler(&logged, nil))
	err := g.do(panickingWrite)
	if err == nil || !strings.Contains(err.Error(), "the panic value 4711") {
		t.Fatalf("panicking write: %v, want an error with the panic's value", err)
	}
	out := logged.String()
	for _, want := range []string{"the panic value 4711", "panickingWrite", "groupcommit_test.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	// The committer survived: the next write commits.
	if err := g.do(put("after")); err != nil {
		t.Fatal(err)
	}
}

func panickingWrite(*bolt.Tx) error { panic(fmt.Sprintf("the panic value %d", 4711)) }
