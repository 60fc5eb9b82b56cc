package files

import (
	"bytes"
	"strconv"
	"testing"
)

// BenchmarkStage is the upload path below HTTP: copy, SHA-256 (the fsync
// is Place's, before the file becomes visible).
//
//	go test -run '^$' -bench Stage ./internal/files
func BenchmarkStage(b *testing.B) {
	for _, size := range []int{16 << 10, 64 << 20} {
		b.Run(byteSize(size), func(b *testing.B) {
			d, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
			b.SetBytes(int64(size))
			for b.Loop() {
				s, err := Stage(d.Blobs(), bytes.NewReader(data), 0)
				if err != nil {
					b.Fatal(err)
				}
				s.Discard()
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MiB"
	}
	return strconv.Itoa(n>>10) + "KiB"
}
