package main

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// normal runs the well-behaved clients for b.measure: 4 uploaders of small
// Markdown reports (keep-alive, as reportctl), a ping every 100 ms on a
// new connection (as a health check), 2 readers of a small page of the
// content origin (keep-alive) and a content-origin fetch every 100 ms on a
// new connection.
func (b *bench) normal(name string, a *attack) phase {
	p := phase{name: name}
	var mu sync.Mutex
	stop := time.Now().Add(b.measure)
	start := time.Now()
	var wg sync.WaitGroup
	up := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	var seq atomic.Int64
	for w := range 4 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				n := seq.Add(1)
				md := fmt.Appendf(nil, "# Build %d\n\nWorker %d, report %d: all tests passed.\n", n, w, n)
				_, _, err := b.upload(up, "md", fmt.Sprintf("r%d.md", n), md)
				mu.Lock()
				if err != nil {
					p.uploadErrs++
				} else {
					p.uploads++
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(time.Second)
				}
			}
		})
	}
	pages := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for range 2 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				err := get(pages, b.content, b.smallHost, b.smallPath)
				mu.Lock()
				if err != nil {
					p.pageErrs++
				} else {
					p.pages++
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(time.Second)
				}
			}
		})
	}
	const pingTimeout = 10 * time.Second
	probe := func(addr, host, path string, lat *[]time.Duration, fails, busy *int) {
		fresh := &http.Client{Timeout: pingTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var inner sync.WaitGroup
		for time.Now().Before(stop) {
			<-tick.C
			inner.Go(func() {
				t0 := time.Now()
				err := get(fresh, addr, host, path)
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					*fails++
					if _, ok := err.(statusError); ok {
						*busy++
					}
					d = max(d, pingTimeout)
				}
				*lat = append(*lat, d)
				mu.Unlock()
			})
		}
		inner.Wait()
	}
	wg.Go(func() { probe(b.api, "localhost", "/api/reports/ping", &p.pings, &p.pingFails, &p.pingBusy) })
	wg.Go(func() {
		probe(b.content, b.smallHost, b.smallPath, &p.contentPings, &p.contentPingFails, &p.contentPingBusy)
	})
	wg.Wait()
	p.secs = time.Since(start).Seconds()
	slices.Sort(p.pings)
	slices.Sort(p.contentPings)
	if a != nil {
		p.attackersUp, p.attackerReconnect = int(a.up.Load()), a.reconnects.Load()
	}
	p.load = loadavg()
	return p
}

// get fetches host+path from addr and reads the body; a non-2xx is an error.
func get(c *http.Client, addr, host, path string) error {
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Host = host
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		return statusError(res.StatusCode)
	}
	return nil
}

// statusError is an answer that is not a success (a busy answer).
type statusError int

func (e statusError) Error() string { return http.StatusText(int(e)) }
