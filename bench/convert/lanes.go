package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reportd/reportd/internal/convert"
	"github.com/reportd/reportd/internal/report"
)

// lanes measures small decks while a long deck converts: the small-deck
// p95 with the small-deck lane (convert.small_deck_bytes) on or off, one
// office worker in the main pool either way. The long deck is the fixture
// deck with shapes text boxes of random text on slide one.
func lanes(testdata, work string, shapes int, lane bool, interval time.Duration, log *slog.Logger) error {
	base, err := os.ReadFile(filepath.Join(testdata, "deck.pptx"))
	if err != nil {
		return err
	}
	big, err := shapesDeck(base, shapes)
	if err != nil {
		return err
	}
	bigPath, smallPath := filepath.Join(work, "big.pptx"), filepath.Join(work, "small.pptx")
	if err := os.WriteFile(bigPath, big, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(smallPath, base, 0o644); err != nil {
		return err
	}
	cfg := convert.DefaultConfig()
	cfg.CacheDir = filepath.Join(work, "cache-lanes")
	cfg.OfficeWorkers = 1
	cfg.JobTimeout = 5 * time.Minute
	cfg.MaxWorkerRSS = 4 << 30 // the long deck is slow, not over the cap
	cfg.QueueSize = 1000       // small decks queue behind the long one without the lane: none is refused
	// The long deck is slow for its shapes, not its bytes (~330 KiB at
	// 4000 shapes, under the 1 MiB default): the lane threshold sits
	// between the two decks' sizes, as an operator would set it.
	cfg.SmallDeckBytes = int64(len(big)) - 1
	if !lane {
		cfg.SmallDeckBytes = -1
	}
	cfg.Logger = log
	m, err := convert.New(cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	ctx := context.Background()
	seq := 0
	one := func(path string, id int64) (time.Duration, error) {
		seq++
		start := time.Now()
		f, err := m.PDF(ctx, convert.Job{ReportID: id, Type: report.PPTX, Src: path, ContentKey: fmt.Sprintf("%064x", seq)})
		if err != nil {
			return 0, err
		}
		f.Close()
		return time.Since(start), nil
	}
	for range 3 { // warm both pools
		if _, err := one(smallPath, 1); err != nil {
			return err
		}
	}
	done := make(chan error, 1)
	var bigTime time.Duration
	go func() {
		t, err := one(bigPath, 2)
		bigTime = t
		done <- err
	}()
	time.Sleep(time.Second) // let the long deck take the main worker first
	// Small decks arrive every interval, each on its own, whether or not
	// the ones before have finished (open loop): without the lane they
	// queue behind the long deck, and each one's wait is counted.
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	s := sample{name: "small deck while long deck converts"}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var bigErr error
	for running := true; running; {
		select {
		case bigErr = <-done:
			running = false
		case <-tick.C:
			wg.Add(1)
			go func() {
				defer wg.Done()
				t, err := one(smallPath, 1)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				s.times = append(s.times, t)
			}()
		}
	}
	wg.Wait()
	if bigErr != nil {
		return fmt.Errorf("long deck: %w", bigErr)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d small decks failed, the first: %w", len(errs), errs[0])
	}
	if len(s.times) == 0 {
		return fmt.Errorf("no small deck arrived while the long deck converted")
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("small-deck lane %v (threshold %d KiB): long deck (%d shapes, %d KiB) took %s; %d small decks arriving every %s meanwhile: p50 %s, p95 %s, max %s; load average %s\n",
		lane, max(cfg.SmallDeckBytes, 0)>>10, shapes, len(big)>>10, ms(bigTime), len(s.times), interval,
		ms(s.pct(0.5)), ms(s.pct(0.95)), ms(s.pct(1)), strings.Join(strings.Fields(string(load))[:3], " "))
	return nil
}

// shapesDeck adds n text boxes of random text to slide one of deck.
func shapesDeck(deck []byte, n int) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(deck), int64(len(deck)))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, err
		}
		if f.Name == "ppt/slides/slide1.xml" {
			var sb strings.Builder
			text := make([]byte, 60)
			for i := range n {
				rand.Read(text)
				fmt.Fprintf(&sb, `<p:sp><p:nvSpPr><p:cNvPr id="%d" name=""/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>`+
					`<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="900000" cy="300000"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>`+
					`<p:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="en-US" sz="%d"/><a:t>%x</a:t></a:r></a:p></p:txBody></p:sp>`,
					1000+i, (i*7919)%9000000, (i*104729)%6000000, 800+i%2000, text)
			}
			b = []byte(strings.Replace(string(b), "</p:spTree>", sb.String()+"</p:spTree>", 1))
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(b); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
