// Package site ingests and stores HTML report sites (coverage.py,
// istanbul/c8, Playwright, Allure, mochawesome output): a whole folder
// uploaded as a .zip, .tar.gz, .tar.zst or .tar archive or as named parts,
// stored content-addressed through the blob.Store that holds single report
// files.
//
// # Ingest
//
// Every entry is checked: every name (CheckName: a clean relative UTF-8
// slash path), every entry type (symbolic and hard links, devices, named
// pipes are refused; folders are skipped), duplicate names and names equal
// under Unicode case folding, the number of entries (Options.MaxEntries),
// the bytes actually expanded (Options.MaxBytes, counted while reading,
// never taken from headers) and the compression ratio (Options.MaxRatio,
// per zip entry against its compressed size and overall against the
// archive size, enforced once more than Options.RatioFloor bytes came
// out). Damaged or truncated archives fail too, as every entry is read to
// its end (zip CRCs, the gzip and zstd checksums). Root and entry are
// settled from the names. A refused upload stores nothing, and the
// manifest is never visible before the files it names are durable.
//
// Where the store offers a blob.Batch (the local store), the source is
// read once: each file is hashed and staged in the batch as it is read,
// and the batch is committed (made durable, then visible) only after the
// last entry passed and root and entry were settled, with the manifest
// in it (the batch makes every object durable before it gives any its
// key, and a manifest is read only once the caller's row names it); a
// refusal discards it. Stage and Staged.Finish split that in two, so that
// a tar archive can be read while it arrives (Stream) and committed once
// the rest of the upload is known. Elsewhere (S3) the source is read twice: a first pass
// checks everything without storing a byte, the second stores, and an
// upload that fails during it (a store error, a cancelled request) leaves
// no manifest, only content objects for GC.
//
// # Keys and format
//
// Each file's bytes live once at cas/<sha256[:2]>/<sha256> (lower-case
// hex), created with IfNoneMatch: an object already there is the same
// content, so the files every upload repeats (Playwright's trace viewer,
// coverage.py's JS and CSS) are stored once. Small files are hashed in
// memory, larger ones staged in Options.TempDir: memory stays bounded and
// a content key never holds a partial object. The storing pass hashes
// each file as it reads it and hands the write to a pool of 8 workers
// (at most 16 MiB of small files queued): through one blob.Batch where
// the store offers it (the local store: nothing visible before one
// syncfs made every new object durable), else by parallel Puts (S3).
// Names from the upload never become file-system paths: they live only in
// the manifest, so no entry can land outside the store (whose local
// implementation opens through an os.Root). A site is an immutable JSON
// manifest at a key sites/….json chosen by the caller (ManifestKey(id) is
// sites/<id>.json), also created with IfNoneMatch, after every object is
// durable:
//
//	{"version":1,"entry":"index.html","totalBytes":1234,
//	 "files":[{"path":"css/a.css","sha256":"…","size":12,"contentType":"text/css; charset=utf-8"}, …]}
//
// Files are sorted by path (byte order); contentType comes from a built-in
// table by extension (ContentType); entry is "" when no entry page was
// found (the caller then serves Listing). Precompressed gzip and brotli
// copies are not part of a site: they belong to content objects, made in
// the background after publishing (MakeVariants, VariantKey).
//
// # Deletion and GC
//
// Delete removes a manifest only. GC removes the content objects no
// manifest below sites/ references and that are older than a grace
// period; it never deletes anything if a manifest cannot be read. Other
// objects below sites/ are the caller's and are left alone. The
// grace period covers ingests in flight (their objects exist before their
// manifest). An ingest that reuses an unreferenced object older than the
// grace period while GC runs could see it removed before its manifest
// lands, so the caller must not run GC concurrently with Ingest (one
// daemon: a lock; several: a leader that also holds off ingests).
package site

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/report"
)

// Key prefixes and the manifest version.
const (
	ManifestPrefix = "sites/"
	ObjectPrefix   = "cas/"
	Version        = 1
)

// Defaults of Options.
const (
	DefaultMaxEntries       = 100_000
	DefaultMaxBytes   int64 = 2 << 30
	DefaultMaxRatio         = 200
	DefaultRatioFloor int64 = 1 << 20
)

// DefaultEntries are the entry pages looked for, in order, when none is
// given; failing them, the only .html file of the site is the entry.
var DefaultEntries = []string{"index.html", "mochawesome.html", "report.html"}

// Options tunes one Ingest.
type Options struct {
	// ManifestKey is where the manifest goes: below sites/ and ending in
	// .json (ManifestKey(id)), where GC finds it; it must not exist yet.
	ManifestKey string
	// Entry is the page a site opens on, relative to the site root; it
	// must be a file of the site. "" picks one (DefaultEntries).
	Entry string
	// Root is the folder of the upload that becomes the site: every file
	// must be below it. "" strips one top folder if all files share it;
	// "." keeps the names as they are.
	Root string
	// MaxEntries bounds archive entries (folders included) or parts
	// (default 100,000).
	MaxEntries int
	// MaxBytes bounds the bytes the files expand to (default 2 GiB).
	MaxBytes int64
	// MaxRatio bounds expanded/compressed bytes, per zip entry and over
	// the whole archive (default 200).
	MaxRatio int
	// RatioFloor is how many bytes may come out before MaxRatio applies,
	// so small, very compressible files pass (default 1 MiB).
	RatioFloor int64
	// TempDir stages large files while they are hashed (default
	// os.TempDir()); on the local store's file system, they are stored by
	// rename. Nothing is left there.
	TempDir string
	// GCRuns, if set, is the store's GC generation: a count that is odd
	// while a GC removes objects and grows with each one. Stage (not under
	// the caller's site lock) records it, and Finish takes the objects the
	// staging found stored as still there when no GC began or ran since;
	// without it, Finish stats each of them again.
	GCRuns func() uint64
}

func (o Options) withDefaults() Options {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxRatio <= 0 {
		o.MaxRatio = DefaultMaxRatio
	}
	if o.RatioFloor <= 0 {
		o.RatioFloor = DefaultRatioFloor
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	return o
}

// isManifestKey tells whether key is where GC looks for manifests: below
// sites/ and ending in .json.
func isManifestKey(key string) bool {
	return strings.HasPrefix(key, ManifestPrefix) && strings.HasSuffix(key, ".json")
}

// ManifestKey is the conventional manifest key of a site report.
func ManifestKey(id string) string { return ManifestPrefix + id + ".json" }

// ObjectKey is the content key of a sha256 (lower-case hex).
func ObjectKey(sha string) string { return ObjectPrefix + sha[:2] + "/" + sha }

// Manifest describes a stored site. It is immutable once written.
type Manifest struct {
	Version    int    `json:"version"`
	Entry      string `json:"entry"`
	TotalBytes int64  `json:"totalBytes"`
	Files      []File `json:"files"`
	// Root, never stored, is the folder of the upload that became the
	// site ("" when the names were kept as sent): the one top folder
	// stripped ("allure-report" of allure-report/index.html…) or the Root
	// option given. Ingest fills it in; the service names sites after it.
	Root string `json:"-"`
	// SHA256, never stored, is the hex sha256 of the manifest's stored
	// bytes, which Ingest and Finish fill in (what names a site's content).
	SHA256 string `json:"-"`
}

// File is one file of a site.
type File struct {
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType"`
	// Encoding, never stored, names a precompressed variant to open
	// (Gzip or Brotli; "" is the file itself): see VariantKey.
	Encoding string `json:"-"`
}

// Key is the content key holding f's bytes (or its Encoding variant's).
func (f File) Key() string {
	if f.Encoding != "" {
		return VariantKey(f.SHA256, f.Encoding)
	}
	return ObjectKey(f.SHA256)
}

// AppendKey appends f.Key() to b, for a lookup by key that makes no string.
func (f File) AppendKey(b []byte) []byte {
	b = append(append(append(append(b, ObjectPrefix...), f.SHA256[:2]...), '/'), f.SHA256...)
	if f.Encoding != "" {
		e, _ := encoder(f.Encoding)
		b = append(b, e.Suffix...)
	}
	return b
}

// Lookup finds the file at p.
func (m Manifest) Lookup(p string) (File, bool) {
	i, ok := slices.BinarySearchFunc(m.Files, p, func(f File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return File{}, false
	}
	return m.Files[i], true
}

// guard enforces the limits while a pass reads the source.
type guard struct {
	maxEntries int
	maxBytes   int64
	ratio      int64
	floor      int64
	archive    int64 // the archive's size; 0: parts, no ratio
	// arrived counts a streamed archive's bytes so far (written by the
	// goroutine that reads the stream: the zstd decoder reads ahead on its
	// own); while set, it stands for archive (archiveSize).
	arrived *atomic.Int64
	entries int
	total   int64
}

// archiveSize is what the ratio is held to: the archive's size, or while
// a stream arrives its bytes so far plus the allowance (streamAllowance);
// MaxInt64 for parts.
func (g *guard) archiveSize() int64 {
	switch {
	case g.arrived != nil:
		return max(g.arrived.Load(), 1) + g.maxBytes/streamAllowance/g.ratio
	case g.archive > 0:
		return g.archive
	}
	return math.MaxInt64
}

func tooManyEntries(max int) error {
	return report.Errorf(report.PayloadTooLarge, "the site has more than %d entries", max)
}

func (g *guard) bomb(at string) error {
	if at == "" {
		return report.Errorf(report.Validation, "the archive expands more than %d times its size, as compression bombs do", g.ratio)
	}
	return report.Errorf(report.Validation, "the archive expands more than %d times its size at %q, as compression bombs do", g.ratio, at)
}

// counter counts one file's bytes as they are read and stops at a limit.
type counter struct {
	ctx   context.Context
	r     io.Reader
	g     *guard
	name  string
	csize int64
	n     int64
}

func (c *counter) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	g := c.g
	g.total += int64(n)
	switch {
	case g.total > g.maxBytes:
		return n, report.Errorf(report.PayloadTooLarge, "the site expands to more than %d bytes (at %q)", g.maxBytes, c.name)
	case c.csize > 0 && c.n > g.floor && c.n/g.ratio > c.csize:
		return n, report.Errorf(report.Validation, "entry %q expands more than %d times its compressed size, as compression bombs do", c.name, g.ratio)
	case g.total > g.floor && g.total/g.ratio > g.archiveSize():
		return n, g.bomb(c.name)
	}
	return n, err
}

// scan runs one pass: it checks every entry and hands each file's counted
// content to keep, which returns its sha256 and precompressed variants
// (nothing in the checking pass).
func scan(ctx context.Context, src Source, opt Options, keep func(name string, r io.Reader) (File, error)) ([]File, error) {
	g := &guard{maxEntries: opt.MaxEntries, maxBytes: opt.MaxBytes, ratio: int64(opt.MaxRatio), floor: opt.RatioFloor}
	if src.format != "parts" {
		g.archive = max(src.size, 1)
	}
	seen := newNames()
	var files []File
	err := src.walk(ctx, g, func(h header, r io.Reader) error {
		if h.kind == kSkip {
			return nil
		}
		if g.entries++; g.entries > g.maxEntries {
			return tooManyEntries(g.maxEntries)
		}
		if h.kind == kBad {
			return report.Errorf(report.Validation, "entry %q is %s: sites hold regular files only", h.raw, h.what)
		}
		var name string
		var err error
		if src.format == "parts" {
			name, err = h.raw, CheckName(h.raw)
		} else {
			name, err = archiveName(h.raw, h.kind == kDir)
		}
		if err != nil || h.kind == kDir {
			return err
		}
		if err := seen.add(name); err != nil {
			return err
		}
		c := &counter{ctx: ctx, r: r, g: g, name: h.raw, csize: h.csize}
		f, err := keep(name, c)
		if err != nil {
			return err
		}
		f.Path, f.Size = name, c.n
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, report.Errorf(report.Validation, "the site holds no files")
	}
	return files, nil
}

// Ingest checks src, stores its files content-addressed and writes the
// site's manifest at opt.ManifestKey, last. See the package comment.
func Ingest(ctx context.Context, store blob.Store, src Source, opt Options) (Manifest, error) {
	opt = opt.withDefaults()
	if err := blob.CheckKey(opt.ManifestKey); err != nil {
		return Manifest{}, err
	}
	if !isManifestKey(opt.ManifestKey) {
		return Manifest{}, report.Errorf(report.Internal, "site manifest key %q is not %s….json", opt.ManifestKey, ManifestPrefix)
	}
	if _, err := store.Stat(ctx, opt.ManifestKey); err == nil {
		return Manifest{}, blob.Exists(opt.ManifestKey)
	} else if !errors.Is(err, blob.ErrNotFound) {
		return Manifest{}, err
	}
	if _, ok := store.(blob.Batcher); ok {
		st, err := Stage(ctx, store, src, opt)
		if err != nil {
			return Manifest{}, err
		}
		st.locked = true // the caller keeps GC away during Ingest
		return st.Finish(ctx, opt)
	}
	var stored []File
	var names []string
	var prefix, entry string
	checked, err := scan(ctx, src, opt, func(_ string, r io.Reader) (File, error) {
		_, err := io.Copy(io.Discard, r)
		return File{}, err
	})
	if err != nil {
		return Manifest{}, err
	}
	if prefix, names, entry, err = settle(checked, opt); err != nil {
		return Manifest{}, err
	}
	p := newPutter(ctx, store, opt.TempDir)
	stored, err = scan(p.ctx, src, opt, p.put)
	err = p.wait(err)
	p.cancel()
	if err != nil {
		return Manifest{}, err
	}
	if len(stored) != len(checked) {
		return Manifest{}, report.Errorf(report.Internal, "the upload changed while it was stored")
	}
	for i, f := range stored {
		if f.Path != checked[i].Path || f.Size != checked[i].Size {
			return Manifest{}, report.Errorf(report.Internal, "the upload changed while it was stored")
		}
	}
	return writeManifest(ctx, store, opt, stored, names, prefix, entry)
}

// Staged is a site read once, checked and staged in a blob.Batch of the
// store: none of its files is visible yet. Finish stores it, Discard
// drops it; one of them must be called.
type Staged struct {
	p      *putter
	files  []File
	locked bool   // staged under the caller's site lock (Ingest)
	gcRun  uint64 // opt.GCRuns when the staging began (MaxUint64: unknown)
}

// ErrGone is Finish's error when an object the staging found stored
// already (and so did not stage) is gone since: GC removed it. The caller
// ingests the upload again (from its staged copy).
var ErrGone = errors.New("site: a content object found at staging is gone")

// Stage reads src once, checks every entry as Ingest does and stages its
// files in a batch (stores that offer blob.Batcher only). Root and entry
// are settled by Finish, which may run later (once the upload's other
// fields are known) with the same ManifestKey-free checks repeated.
func Stage(ctx context.Context, store blob.Store, src Source, opt Options) (*Staged, error) {
	opt = opt.withDefaults()
	if _, ok := store.(blob.Batcher); !ok {
		return nil, report.Errorf(report.Internal, "site staging needs a store with batches")
	}
	if src.stream != nil && !Streamable(src.format) {
		return nil, report.Errorf(report.Internal, "a %s archive cannot be read as it arrives", src.format)
	}
	st := &Staged{gcRun: math.MaxUint64}
	if opt.GCRuns != nil {
		st.gcRun = opt.GCRuns()
	}
	p := newPutter(ctx, store, opt.TempDir)
	files, err := scan(p.ctx, src, opt, p.put)
	if err = p.wait(err); err != nil {
		p.batch.Discard()
		p.cancel()
		return nil, err
	}
	st.p, st.files = p, files
	return st, nil
}

// gcSince tells whether a GC may have removed objects since the staging
// began (opt.GCRuns).
func (st *Staged) gcSince(opt Options) bool {
	return opt.GCRuns == nil || st.gcRun%2 == 1 || opt.GCRuns() != st.gcRun
}

// Manifest settles root and entry (opt.Root, opt.Entry) and returns the
// manifest Finish would write; a root or entry that is not there is a
// refusal. Its files can be read (Open) before Finish.
func (st *Staged) Manifest(opt Options) (Manifest, error) {
	prefix, names, entry, err := settle(st.files, opt)
	if err != nil {
		return Manifest{}, err
	}
	return newManifest(st.files, names, prefix, entry), nil
}

// Open reads one staged file (a View's OpenFunc): from the batch before
// Finish, from the store after.
func (st *Staged) Open(ctx context.Context, f File) (blob.Object, error) {
	if o, ok := st.p.batch.(blob.BatchOpener); ok {
		return o.Open(ctx, f.Key())
	}
	return st.p.store.Open(ctx, f.Key())
}

// Finish settles root and entry (Manifest) and commits the staged files
// with the manifest at opt.ManifestKey: all durable, then visible. A
// refusal stores nothing.
func (st *Staged) Finish(ctx context.Context, opt Options) (Manifest, error) {
	opt = opt.withDefaults()
	defer st.Discard()
	m, err := st.Manifest(opt)
	if err != nil {
		return Manifest{}, err
	}
	if err := blob.CheckKey(opt.ManifestKey); err != nil {
		return Manifest{}, err
	}
	if _, err := st.p.store.Stat(ctx, opt.ManifestKey); err == nil {
		return Manifest{}, blob.Exists(opt.ManifestKey)
	} else if !errors.Is(err, blob.ErrNotFound) {
		return Manifest{}, err
	}
	if !st.locked && st.gcSince(opt) {
		if err := st.p.stillThere(ctx); err != nil {
			return Manifest{}, err
		}
	}
	// The manifest is committed with the files: the batch makes every
	// object durable before it links any, and the manifest is not read
	// before the caller's row names it.
	b, err := json.Marshal(m)
	if err != nil {
		return Manifest{}, err
	}
	m.SHA256 = sum(b)
	mopt := blob.PutOptions{Size: int64(len(b)), ContentType: "application/json"}
	if err := st.p.batch.Put(ctx, opt.ManifestKey, bytes.NewReader(b), mopt); err != nil {
		return Manifest{}, err
	}
	if err := st.p.batch.Commit(ctx); err != nil {
		// A commit cut short may have linked the manifest already: no row
		// will name it (the start-up sweep would remove it otherwise).
		st.p.store.Delete(context.WithoutCancel(ctx), opt.ManifestKey)
		return Manifest{}, err
	}
	return m, nil
}

// Discard drops what is staged and not yet stored; safe after Finish,
// on nil and twice.
func (st *Staged) Discard() {
	if st != nil {
		st.p.batch.Discard()
		st.p.cancel()
	}
}

// settle finds the site's root and entry from the files' names: names are
// the paths below the root, in the files' order.
func settle(files []File, opt Options) (prefix string, names []string, entry string, err error) {
	names = make([]string, len(files))
	for i, f := range files {
		names[i] = f.Path
	}
	if prefix, err = rootPrefix(names, opt.Root); err != nil {
		return "", nil, "", err
	}
	for i := range names {
		names[i] = strings.TrimPrefix(names[i], prefix)
	}
	if entry, err = pickEntry(names, opt.Entry); err != nil {
		return "", nil, "", err
	}
	return prefix, names, entry, nil
}

// writeManifest writes the manifest of the stored files, last.
func writeManifest(ctx context.Context, store blob.Store, opt Options, stored []File, names []string, prefix, entry string) (Manifest, error) {
	m := newManifest(stored, names, prefix, entry)
	b, err := json.Marshal(m)
	if err != nil {
		return Manifest{}, err
	}
	m.SHA256 = sum(b)
	_, err = store.Put(ctx, opt.ManifestKey, bytes.NewReader(b), blob.PutOptions{IfNoneMatch: true, Size: int64(len(b)), ContentType: "application/json"})
	return m, err
}

// sum is the hex sha256 of b.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// newManifest is the manifest of files renamed to names (below the root
// prefix), sorted by path.
func newManifest(files []File, names []string, prefix, entry string) Manifest {
	m := Manifest{Version: Version, Entry: entry, Files: slices.Clone(files), Root: strings.TrimSuffix(prefix, "/")}
	for i := range m.Files {
		f := &m.Files[i]
		f.Path = names[i]
		f.ContentType = ContentType(f.Path)
		m.TotalBytes += f.Size
	}
	slices.SortFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return m
}

// rootPrefix is the folder prefix ("a/" or "") stripped from every name.
func rootPrefix(names []string, root string) (string, error) {
	switch root {
	case ".":
		return "", nil
	case "":
		top, _, ok := strings.Cut(names[0], "/")
		if !ok {
			return "", nil
		}
		for _, n := range names {
			if !strings.HasPrefix(n, top+"/") {
				return "", nil
			}
		}
		return top + "/", nil
	}
	r := strings.TrimSuffix(root, "/")
	if err := CheckName(r); err != nil {
		return "", report.Errorf(report.Validation, "invalid root %q", root)
	}
	for _, n := range names {
		if !strings.HasPrefix(n, r+"/") {
			return "", report.Errorf(report.Validation, "root %q is not a folder holding every file of the upload (%q is outside it)", root, n)
		}
	}
	return r + "/", nil
}

// pickEntry settles the entry page among the (root-relative) names.
func pickEntry(names []string, entry string) (string, error) {
	has := make(map[string]bool, len(names))
	for _, n := range names {
		has[n] = true
	}
	if entry != "" {
		if err := CheckName(entry); err != nil || !has[entry] {
			return "", report.Errorf(report.Validation, "entry %q is not a file of the site", entry)
		}
		return entry, nil
	}
	for _, e := range DefaultEntries {
		if has[e] {
			return e, nil
		}
	}
	only := ""
	for _, n := range names {
		if ext := strings.ToLower(path.Ext(n)); ext == ".html" || ext == ".htm" {
			if only != "" {
				return "", nil
			}
			only = n
		}
	}
	return only, nil
}

// Load reads and checks the manifest at key.
func Load(ctx context.Context, store blob.Store, key string) (Manifest, error) {
	o, err := store.Open(ctx, key)
	if err != nil {
		return Manifest{}, err
	}
	defer o.Close()
	var m Manifest
	if err := json.NewDecoder(o).Decode(&m); err != nil {
		return Manifest{}, blob.StorageErr(fmt.Errorf("site manifest %s: %w", key, err), "cannot read the site")
	}
	bad := func(why string) (Manifest, error) {
		return Manifest{}, blob.StorageErr(fmt.Errorf("site manifest %s: %s", key, why), "cannot read the site")
	}
	if m.Version != Version {
		return bad(fmt.Sprintf("version %d", m.Version))
	}
	for i, f := range m.Files {
		if CheckName(f.Path) != nil || !isSHA256(f.SHA256) || f.Size < 0 {
			return bad(fmt.Sprintf("bad file %q", f.Path))
		}
		if i > 0 && m.Files[i-1].Path >= f.Path {
			return bad("files not sorted")
		}
	}
	return m, nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Delete removes the manifest at key (a missing one is not an error). The
// content objects it alone referenced go at the next GC.
func Delete(ctx context.Context, store blob.Store, key string) error {
	if !isManifestKey(key) {
		return report.Errorf(report.Internal, "site manifest key %q is not %s….json", key, ManifestPrefix)
	}
	return store.Delete(ctx, key)
}

// DefaultGrace is GC's default grace period.
const DefaultGrace = 24 * time.Hour

// GCOptions tunes GC.
type GCOptions struct {
	// Grace spares objects younger than this (default 24h): longer than
	// any ingest takes.
	Grace time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// GCStats tells what GC did.
type GCStats struct {
	Manifests    int   // manifests read
	Objects      int   // content objects seen
	Removed      int   // objects removed
	RemovedBytes int64 // their bytes
}

// GC removes the content objects that no manifest (sites/….json) references
// (with their precompressed variants and markers, VariantKey) and that are older than the grace period. It lists the objects first
// and the manifests after, and stops without removing anything if a
// manifest cannot be read. Run it while no Ingest runs (package comment).
func GC(ctx context.Context, store blob.Store, opt GCOptions) (GCStats, error) {
	if opt.Grace <= 0 {
		opt.Grace = DefaultGrace
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	cutoff := opt.Now().Add(-opt.Grace)
	var st GCStats
	var old []blob.Info
	err := store.Walk(ctx, ObjectPrefix, func(i blob.Info) error {
		st.Objects++
		if objectSHA(i.Key) != "" && i.ModTime.Before(cutoff) {
			old = append(old, i)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	var keys []string
	err = store.Walk(ctx, ManifestPrefix, func(i blob.Info) error {
		if isManifestKey(i.Key) {
			keys = append(keys, i.Key)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	live := map[string]bool{}
	for _, k := range keys {
		m, err := Load(ctx, store, k)
		if errors.Is(err, blob.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return st, err
		}
		st.Manifests++
		for _, f := range m.Files {
			live[f.SHA256] = true
		}
	}
	for _, i := range old {
		if live[objectSHA(i.Key)] {
			continue
		}
		if err := store.Delete(ctx, i.Key); err != nil {
			return st, err
		}
		st.Removed++
		st.RemovedBytes += i.Size
	}
	return st, nil
}
