package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

type results struct {
	Lists   []listResult
	Uploads []throughput
	Big     *bigResult
	Elapsed time.Duration
}

func sortDurations(d []time.Duration) { slices.Sort(d) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func (r results) markdown(sz sizes) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`go run ./bench/scaleout` took %v. PostgreSQL %s and versitygw %s run on loopback beside the daemons.\n\n",
		r.Elapsed.Round(time.Second), "(internal/testserver)", "(internal/testserver)")
	fmt.Fprintf(&b, "### Lists, bbolt and PostgreSQL side by side (%d projects; project 1 always holds %d reports)\n\n", sz.Projects, sz.Target)
	b.WriteString("Stores seeded with BulkLoad (rows only: these reads open no file). One request at a time over a kept-alive connection.\n\n")
	b.WriteString("| Endpoint | Reports in the store | bbolt p50 | bbolt p95 | PostgreSQL p50 | PostgreSQL p95 | Body |\n|---|---|---|---|---|---|---|\n")
	type key struct {
		ep string
		n  int
	}
	by := map[key]map[string]listResult{}
	var order []key
	for _, l := range r.Lists {
		k := key{l.Endpoint, l.Reports}
		if by[k] == nil {
			by[k] = map[string]listResult{}
			order = append(order, k)
		}
		by[k][l.Backend] = l
	}
	slices.SortStableFunc(order, func(a, b key) int { return strings.Compare(a.ep, b.ep) })
	for _, k := range order {
		bo, pg := by[k]["bolt"], by[k]["postgres"]
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %d B |\n", k.ep, k.n, ms(bo.P50), ms(bo.P95), ms(pg.P50), ms(pg.P95), pg.Bytes)
	}
	b.WriteString("\nSeeding (BulkLoad, rows only):")
	for _, l := range r.Lists {
		if strings.HasPrefix(l.Endpoint, "GET /api/projects") {
			fmt.Fprintf(&b, " %s to %d in %v;", l.Backend, l.Reports, l.Seed.Round(time.Millisecond))
		}
	}
	b.WriteString("\n\n### Upload throughput, storage: postgres+s3 (one PostgreSQL, one versitygw bucket)\n\n")
	fmt.Fprintf(&b, "%d-byte Markdown reports from %d concurrent uploaders, each bound to one replica (round-robin), for %v.\n\n",
		sz.UploadSize, sz.Uploaders, sz.UploadFor)
	b.WriteString("| Replicas | Reports stored | Reports/s | Upload p50 | Upload p95 |\n|---|---|---|---|---|\n")
	for _, t := range r.Uploads {
		fmt.Fprintf(&b, "| %d | %d | %.0f | %s | %s |\n", t.Replicas, t.Reports, float64(t.Reports)/t.Took.Seconds(), ms(t.P50), ms(t.P95))
	}
	if r.Big != nil {
		g := r.Big
		b.WriteString("\n### One streamed upload through the S3 path\n\n")
		b.WriteString("| Size | Took | Throughput | Daemon VmHWM before | after | Growth | Target |\n|---|---|---|---|---|---|---|\n")
		fmt.Fprintf(&b, "| %d MiB | %v | %.0f MiB/s | %d MiB | %d MiB | %.1f MiB | < 64 MiB |\n", g.Bytes>>20, g.Took.Round(time.Millisecond),
			float64(g.Bytes)/(1<<20)/g.Took.Seconds(), g.HWMBefore>>20, g.HWMAft>>20, float64(g.HWMAft-g.HWMBefore)/(1<<20))
	}
	return b.String()
}
