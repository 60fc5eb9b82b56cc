package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// waitQueued returns once n jobs wait at g.
func waitQueued(t *testing.T, g *Gate, n int) {
	t.Helper()
	ctx := testfixture.Ctx(t)
	for g.Waiting() != n {
		select {
		case <-ctx.Done():
			t.Fatalf("%d jobs wait, want %d", g.Waiting(), n)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Project 1 runs a job and queues five more before project 2 queues one:
// project 2's job gets the first freed slot, not the sixth.
func TestGateServesProjectsInTurn(t *testing.T) {
	g := NewGate(1, 10, nil)
	ctx := testfixture.Ctx(t)
	leave, err := g.Enter(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int64
	var wg sync.WaitGroup
	queue := func(p int64) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := g.Enter(ctx, p)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, p)
			mu.Unlock()
			l()
		}()
	}
	for i := range 5 {
		queue(1)
		waitQueued(t, g, i+1)
	}
	queue(2)
	waitQueued(t, g, 6)
	leave()
	wg.Wait()
	if len(order) != 6 || order[0] != 2 {
		t.Fatalf("order %v, want project 2 first", order)
	}
}

func TestGateFullAndCancelled(t *testing.T) {
	g := NewGate(1, 1, nil)
	ctx := testfixture.Ctx(t)
	leave, _ := g.Enter(ctx, 1)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { _, err := g.Enter(wctx, 2); done <- err }()
	waitQueued(t, g, 1)
	_, err := g.Enter(ctx, 3)
	testfixture.WantKind(t, err, report.Unavailable)
	cancel()
	testfixture.WantKind(t, <-done, report.Unavailable)
	if g.Waiting() != 0 {
		t.Fatal("a cancelled job still waits")
	}
	leave()
	leave() // a second call is harmless
	l, err := g.Enter(ctx, 3)
	if err != nil {
		t.Fatalf("the slot was not freed: %v", err)
	}
	l()
}
