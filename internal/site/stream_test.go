package site

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/reportd/reportd/internal/report"
)

func zstdOf(t *testing.T, raw []byte, opts ...zstd.EOption) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := zstd.NewWriter(&b, opts...)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var streamSite = []ent{
	{name: "htmlcov/"},
	{name: "htmlcov/index.html", body: "<html>index</html>"},
	{name: "htmlcov/style.css", body: strings.Repeat("body{}\n", 2000)},
	{name: "htmlcov/big.js", body: bigBody(7, 600<<10)}, // staged in a temp file
	{name: "htmlcov/d/" + strings.Repeat("long-name-", 15) + ".html", body: "<p>"},
}

// TestStreamedSitesMatch ingests the same site as a staged archive and as
// a stream read once, in every streamable format: same manifest.
func TestStreamedSitesMatch(t *testing.T) {
	raw := tarBytes(t, false, streamSite)
	want, err := newEnv(t).ingest(t, Tar(bytes.NewReader(raw), int64(len(raw))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	zst := zstdOf(t, raw)
	formats := map[string][]byte{"tar": raw, "tar.gz": tarBytes(t, true, streamSite), "tar.zst": zst}
	for format, b := range formats {
		t.Run(format, func(t *testing.T) {
			e := newEnv(t)
			if format == "tar.zst" {
				m, err := e.ingest(t, TarZst(bytes.NewReader(b), int64(len(b))), Options{})
				if err != nil || !reflect.DeepEqual(m, want) {
					t.Fatalf("TarZst ingest = %+v, %v; want %+v", m, err, want)
				}
				e = newEnv(t)
			}
			// Through a pipe, as the HTTP handler feeds it.
			pr, pw := io.Pipe()
			go func() {
				for c := range slices.Chunk(b, 777) {
					pw.Write(c)
				}
				pw.Close()
			}()
			st, err := Stage(ctx, e.store, Stream(pr, format), Options{TempDir: e.tmp})
			if err != nil {
				t.Fatal(err)
			}
			// Small objects are written in place, pending (mode 0700) until
			// the commit: no upload relies on them before that.
			for _, k := range e.keys(t, ObjectPrefix) {
				if fi, err := os.Stat(filepath.Join(e.objects, k)); err != nil || fi.Mode().Perm() != 0o700 {
					t.Fatalf("object %s visible before Finish and not pending: %v, %v", k, fi.Mode(), err)
				}
			}
			m, err := st.Finish(ctx, e.opt("sites/1.json"))
			if err != nil || !reflect.DeepEqual(m, want) {
				t.Fatalf("streamed = %+v, %v; want %+v", m, err, want)
			}
			e.store.Settle()
			for _, k := range e.keys(t, ObjectPrefix) {
				if fi, err := os.Stat(filepath.Join(e.objects, k)); err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("object %s after Finish: %v, %v; want mode 0600", k, fi.Mode(), err)
				}
			}
			if got, err := Load(ctx, e.store, "sites/1.json"); err != nil || !reflect.DeepEqual(got.Files, want.Files) {
				t.Fatalf("Load = %+v, %v", got, err)
			}
			if m.SHA256 != sum([]byte(read(t, e.store, "sites/1.json"))) {
				t.Fatalf("Finish's SHA256 = %q, not the sha256 of the stored manifest", m.SHA256)
			}
		})
	}
	t.Run("discarded", func(t *testing.T) {
		e := newEnv(t)
		st, err := Stage(ctx, e.store, Stream(bytes.NewReader(zst), "tar.zst"), Options{TempDir: e.tmp})
		if err != nil {
			t.Fatal(err)
		}
		st.Discard()
		st.Discard()
		e.nothingStored(t)
	})
	t.Run("entry settled at Finish", func(t *testing.T) {
		e := newEnv(t)
		st, err := Stage(ctx, e.store, Stream(bytes.NewReader(zst), "tar.zst"), Options{TempDir: e.tmp})
		if err != nil {
			t.Fatal(err)
		}
		opt := e.opt("sites/1.json")
		opt.Entry = "missing.html"
		_, err = st.Finish(ctx, opt)
		refused(t, err, report.Validation, "missing.html")
		e.nothingStored(t)
	})
}

// TestZstdRefusals: what a .tar.zst may not do.
func TestZstdRefusals(t *testing.T) {
	raw := tarBytes(t, false, streamSite)
	zst := zstdOf(t, raw)
	var bomb bytes.Buffer
	tw := tar.NewWriter(&bomb)
	tw.WriteHeader(&tar.Header{Name: "index.html", Typeflag: tar.TypeReg, Size: 2})
	io.WriteString(tw, "hi")
	tw.WriteHeader(&tar.Header{Name: "bomb.bin", Typeflag: tar.TypeReg, Size: 64 << 20})
	z := zeros(64 << 20)
	io.Copy(tw, &z)
	tw.Close()
	bombZst := zstdOf(t, bomb.Bytes(), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	// A frame declaring a 64 MiB window (more than the decoder allows).
	wide := zstdOf(t, tarBytes(t, false, []ent{{name: "index.html", body: bigBody(3, 1<<20)}}),
		zstd.WithWindowSize(64<<20), zstd.WithSingleSegment(false))
	for _, c := range []struct {
		name string
		b    []byte
		kind report.Kind
		want string
	}{
		{"cut in half", zst[:len(zst)/2], report.Validation, "the tar.zst archive is damaged or truncated"},
		{"checksum cut off", zst[:len(zst)-4], report.Validation, "the tar.zst archive is damaged or truncated"},
		{"ratio", bombZst, report.Validation, "expands more than 200 times its size"},
		{"window too large", wide, report.Validation, "the tar.zst archive is damaged or truncated"},
		{"trailing data", append(append([]byte{}, zst...), zstdOf(t, make([]byte, 2<<20))...), report.Validation, "more than 1 MiB of data after its end"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.ingest(t, TarZst(bytes.NewReader(c.b), int64(len(c.b))), Options{})
			refused(t, err, c.kind, c.want)
			e.nothingStored(t)
			_, err = Stage(ctx, e.store, Stream(bytes.NewReader(c.b), "tar.zst"), Options{TempDir: e.tmp})
			refused(t, err, c.kind, c.want)
			e.nothingStored(t)
		})
	}
}

// TestStreamRatio: a stream may run ahead of the ratio limit while it
// arrives (its first megabytes can compress far better than the whole),
// by MaxBytes/streamAllowance bytes at most, so a bomb stops early; once
// it ended, the whole archive is held to the limit.
func TestStreamRatio(t *testing.T) {
	const ratio = 10
	rnd := rand.New(rand.NewPCG(3, 4))
	noise := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return string(b)
	}
	// About 30 times compressible: 1 KiB of noise in every 30 KiB.
	var mixed strings.Builder
	for mixed.Len() < 4<<20 {
		mixed.WriteString(noise(1 << 10))
		mixed.WriteString(strings.Repeat("\x00", 29<<10))
	}
	// 256 MiB: an allowance of 8 MiB past 10 times the bytes arrived.
	opt := Options{MaxRatio: ratio, MaxBytes: 256 << 20}
	var read int64 // of the last stage's archive
	stage := func(es []ent) error {
		e := newEnv(t)
		b := tarBytes(t, true, es)
		r := &arrivedReader{r: bytes.NewReader(b)} // counts what was read
		opt.TempDir = e.tmp
		st, err := Stage(ctx, e.store, Stream(r, "tar.gz"), opt)
		st.Discard()
		e.nothingStored(t)
		read = r.n.Load()
		return err
	}
	if err := stage([]ent{{name: "index.html", body: "<p>"}, {name: "mixed.bin", body: mixed.String()}, {name: "noise.bin", body: noise(1536 << 10)}}); err != nil {
		t.Errorf("a site 30x compressible at first, 3x overall: %v", err)
	}
	err := stage([]ent{{name: "index.html", body: "<p>"}, {name: "mixed.bin", body: mixed.String()}})
	refused(t, err, report.Validation, "expands more than 10 times its size")
	// 64 MiB of zeros, then noise: refused some 8 MiB into the zeros.
	err = stage([]ent{{name: "index.html", body: "<p>"}, {name: "zeros.bin", body: string(make([]byte, 64<<20))}, {name: "noise.bin", body: noise(1 << 20)}})
	refused(t, err, report.Validation, "expands more than 10 times its size")
	if read > 256<<10 {
		t.Errorf("the bomb was read for %d bytes before its refusal", read)
	}
}

// TestStagedSkipsStoredFiles: files stored already are not staged again;
// if one of them is gone by Finish (GC), Finish says so (ErrGone) and
// stores nothing.
func TestStagedSkipsStoredFiles(t *testing.T) {
	raw := tarBytes(t, false, streamSite)
	e := newEnv(t)
	if _, err := e.ingest(t, Tar(bytes.NewReader(raw), int64(len(raw))), Options{}); err != nil {
		t.Fatal(err)
	}
	objects := e.keys(t, ObjectPrefix)
	stage := func() *Staged {
		t.Helper()
		st, err := Stage(ctx, e.store, Stream(bytes.NewReader(raw), "tar"), Options{TempDir: e.tmp})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.p.assumed) != len(objects) {
			t.Fatalf("assumed %q, want every stored object %q", st.p.assumed, objects)
		}
		if ents, _ := e.tmpEntries(); len(ents) != 0 {
			t.Fatalf("staged files for stored objects: %v", ents)
		}
		return st
	}
	if _, err := stage().Finish(ctx, e.opt("sites/2.json")); err != nil {
		t.Fatal(err)
	}
	st := stage()
	if err := e.store.Delete(ctx, objects[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Finish(ctx, e.opt("sites/3.json")); !errors.Is(err, ErrGone) {
		t.Fatalf("Finish after GC = %v, want ErrGone", err)
	}
	if ks := e.keys(t, ManifestPrefix); len(ks) != 2 {
		t.Fatalf("manifests %q, want sites/1 and sites/2 only", ks)
	}
}
