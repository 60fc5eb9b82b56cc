package local

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Concurrent callers share fsyncs, and each caller's fsync began after it
// called: a caller arriving while one runs waits for the next.
func TestDirSyncerGroupsAndOrders(t *testing.T) {
	d := newDirSyncer()
	var calls atomic.Int64
	var mu sync.Mutex
	var starts []time.Time
	release := make(chan struct{})
	d.sync = func(string) error {
		calls.Add(1)
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		<-release
		return nil
	}
	// One caller starts a round that blocks; 50 more arrive meanwhile.
	first := make(chan error, 1)
	go func() { first <- d.Sync("/x") }()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	arrived := time.Now()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if err := d.Sync("/x"); err != nil {
				t.Error(err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // let them gather
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("51 callers made %d fsyncs, want 2 (the running one and one for everyone who came meanwhile)", n)
	}
	if !starts[1].After(arrived) {
		t.Fatalf("the second fsync began before the callers it covers arrived")
	}
	// Different directories never share; an error reaches its round's callers.
	d = newDirSyncer()
	d.sync = func(dir string) error {
		if dir == "/bad" {
			return errors.New("EIO")
		}
		return nil
	}
	if err := d.Sync("/bad"); err == nil {
		t.Fatal("an fsync error was not returned")
	}
	if err := d.Sync("/good"); err != nil {
		t.Fatal(err)
	}
	// The round's goroutine drops the directory just after it answers.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		d.mu.Lock()
		n := len(d.dirs)
		d.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle directories kept", n)
		}
	}
}
