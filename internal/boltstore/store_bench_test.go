package boltstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/report"
)

// The store's read paths at two table sizes, so `go test -bench` shows
// which ones are flat in the number of reports and which grow with it.
//
//	go test -run '^$' -bench . -benchmem ./internal/boltstore
var benchSizes = []int{10_000, 100_000}

const (
	benchProjects   = 1000
	benchPerProject = 100 // reports of project 1 at every size
)

// benchStore is a store with benchProjects projects and n reports, loaded
// with BulkLoad into a temp dir that goes when the benchmark ends.
func benchStore(b *testing.B, n int) *boltstore.Store {
	s, err := boltstore.Open(filepath.Join(b.TempDir(), "reportd.db"), report.Clock{Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	now := time.Now().UTC().Truncate(time.Second)
	ps := make([]report.Project, benchProjects)
	for i := range ps {
		d := "a project for the benchmark"
		ps[i] = report.Project{ID: int64(i + 1), Name: fmt.Sprintf("project-%d", i+1), Description: &d, CreatedAt: report.LocalTime{Time: now}}
	}
	rs := make([]report.ReportRecord, n)
	for i := range rs {
		id := int64(i + 1)
		project := int64(1)
		if i >= benchPerProject {
			project = 2 + int64(i-benchPerProject)%(benchProjects-1)
		}
		rs[i] = report.ReportRecord{Report: report.Report{ID: id, ProjectID: project, FileName: fmt.Sprintf("report-%d.html", id),
			FileType: report.HTML, FilePath: fmt.Sprintf("/uploads/reports/%d.html", id), UploadTime: report.LocalTime{Time: now.AddDate(0, 0, -i%30)}},
			Size: 1234, SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	}
	if err := s.BulkLoad(context.Background(), ps, rs); err != nil {
		b.Fatal(err)
	}
	return s
}

func forSizes(b *testing.B, fn func(b *testing.B, s *boltstore.Store, n int)) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("reports=%d", n), func(b *testing.B) {
			s := benchStore(b, n)
			b.ReportAllocs()
			fn(b, s, n) // b.Loop starts the timer after the setup

		})
	}
}

func BenchmarkProjects(b *testing.B) {
	forSizes(b, func(b *testing.B, s *boltstore.Store, _ int) {
		for b.Loop() {
			if ps, err := s.Projects(context.Background()); err != nil || len(ps) != benchProjects {
				b.Fatal(len(ps), err)
			}
		}
	})
}

func BenchmarkReportsOfProject(b *testing.B) {
	forSizes(b, func(b *testing.B, s *boltstore.Store, _ int) {
		id := int64(1)
		for b.Loop() {
			if rs, err := s.Reports(context.Background(), &id); err != nil || len(rs) != benchPerProject {
				b.Fatal(len(rs), err)
			}
		}
	})
}

func BenchmarkReport(b *testing.B) {
	forSizes(b, func(b *testing.B, s *boltstore.Store, n int) {
		i := 0
		for b.Loop() {
			i = (i + 7919) % n
			if _, err := s.Report(context.Background(), int64(i+1)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkReportsAll(b *testing.B) {
	forSizes(b, func(b *testing.B, s *boltstore.Store, n int) {
		for b.Loop() {
			if rs, err := s.Reports(context.Background(), nil); err != nil || len(rs) != n {
				b.Fatal(len(rs), err)
			}
		}
	})
}

func BenchmarkFilePaths(b *testing.B) {
	forSizes(b, func(b *testing.B, s *boltstore.Store, n int) {
		for b.Loop() {
			count := 0
			if err := s.FilePaths(context.Background(), func(string) error { count++; return nil }); err != nil || count != n {
				b.Fatal(count, err)
			}
		}
	})
}

// BenchmarkCreateReport is one upload's commit (reserve id + row, each a
// durable transaction), alone and from 32 goroutines, where bbolt's Batch
// shares one commit between concurrent writers.
func BenchmarkCreateReport(b *testing.B) {
	for _, par := range []int{1, 32} {
		b.Run(fmt.Sprintf("writers=%d", par), func(b *testing.B) {
			s, err := boltstore.Open(filepath.Join(b.TempDir(), "reportd.db"), report.Clock{Location: time.UTC})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			if err := s.BulkLoad(ctx, []report.Project{{ID: 1, Name: "p"}}, nil); err != nil {
				b.Fatal(err)
			}
			create := func() error {
				id, err := s.NextReportID(ctx)
				if err != nil {
					return err
				}
				_, err = s.CreateReport(ctx, report.ReportRecord{Report: report.Report{ID: id, ProjectID: 1,
					FileName: "r.md", FileType: report.MD, FilePath: fmt.Sprintf("/uploads/reports/%d.md", id),
					UploadTime: report.LocalTime{Time: time.Now()}}, Size: 1, SHA256: "ab"})
				return err
			}
			b.ResetTimer()
			if par == 1 {
				for b.Loop() {
					if err := create(); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			var wg sync.WaitGroup
			work := make(chan struct{})
			errs := make(chan error, par)
			for range par {
				wg.Go(func() {
					for range work {
						if err := create(); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			for range b.N {
				work <- struct{}{}
			}
			close(work)
			wg.Wait()
			close(errs)
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		})
	}
}
