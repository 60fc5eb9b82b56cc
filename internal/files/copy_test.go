package files

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
	"testing/iotest"

	"github.com/reportd/reportd/internal/report"
)

// Stage must store, hash and sniff exactly the bytes it was given, whether
// they fit one copy buffer (inline path) or need many (pipelined path),
// and however the reader chunks them.
func TestStageCopiesExactly(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, size := range []int{0, 1, HeadSize - 1, HeadSize + 1, copyBufSize - 1, copyBufSize, copyBufSize + 1, copyBufs*copyBufSize + 12345, 9 << 20} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*31 + i>>11)
		}
		for name, r := range map[string]io.Reader{
			"whole": bytes.NewReader(data),
			"half":  iotest.HalfReader(bytes.NewReader(data)),
			"eof":   iotest.DataErrReader(bytes.NewReader(data)),
		} {
			s, err := Stage(d.Blobs(), r, 0)
			if err != nil {
				t.Fatalf("size %d %s: %v", size, name, err)
			}
			got, err := os.ReadFile(s.tmp)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			if s.Size != int64(size) || !bytes.Equal(got, data) || s.SHA256 != hex.EncodeToString(sum[:]) ||
				!bytes.Equal(s.Head, data[:min(size, HeadSize)]) {
				t.Fatalf("size %d %s: stored %d bytes (size %d), head %d, sha %s", size, name, len(got), s.Size, len(s.Head), s.SHA256)
			}
			s.Discard()
		}
	}
}

type failingReader struct {
	n   int
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, r.err
	}
	m := min(len(p), r.n)
	r.n -= m
	return m, nil
}

func TestStageErrorsLeaveNothing(t *testing.T) {
	base := t.TempDir()
	d, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cases := []struct {
		name  string
		r     io.Reader
		limit int64
		kind  report.Kind
	}{
		{"over the limit", bytes.NewReader(make([]byte, 3*copyBufSize)), 2 * copyBufSize, report.PayloadTooLarge},
		{"body cap", &failingReader{n: 5 * copyBufSize, err: &http.MaxBytesError{Limit: 5}}, 0, report.PayloadTooLarge},
		{"cut short late", &failingReader{n: 5*copyBufSize + 7, err: io.ErrUnexpectedEOF}, 0, report.Validation},
		{"cut short early", &failingReader{n: 7, err: errors.New("reset")}, 0, report.Validation},
	}
	for _, c := range cases {
		if _, err := Stage(d.Blobs(), c.r, c.limit); !report.IsKind(err, c.kind) {
			t.Errorf("%s: %v, want %s", c.name, err, c.kind)
		}
	}
	left, _ := os.ReadDir(base + "/tmp")
	if len(left) != 0 {
		t.Fatalf("temp files left behind: %v", left)
	}
}
