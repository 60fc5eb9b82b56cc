package dirzip

import (
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWriteTree writes the archive of a generated site of 5,000
// HTML-like pages of about 6 KiB in 50 folders (a coverage report's shape)
// to io.Discard: the client's cost before the network. MB/s counts the
// files' bytes; ratio is the archive's size over theirs; cpu-ms/op is the
// process's CPU time (user and system, all goroutines) per archive, which
// a shared machine's load disturbs less than the wall time.
func BenchmarkWriteTree(b *testing.B) {
	dir := b.TempDir()
	for i := range 5000 {
		write(b, dir, fmt.Sprintf("d%02d/z_%05d_py.html", i%50, i), pageText(i, 6000+i%400))
	}
	tr, err := Scan(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(tr.Bytes)
	b.ReportAllocs()
	var res Result
	cpu0 := cpuTime(b)
	for b.Loop() {
		if res, err = tr.WriteTo(io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(res.ArchiveBytes)/float64(res.Bytes), "ratio")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
