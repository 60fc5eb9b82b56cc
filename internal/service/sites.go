package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// SiteLimits bounds site uploads (config sites.*) and their GC.
type SiteLimits struct {
	MaxEntries int           // archive entries or parts (0: site.DefaultMaxEntries)
	MaxBytes   int64         // bytes the files expand to (0: site.DefaultMaxBytes)
	MaxRatio   int           // expanded/compressed (0: site.DefaultMaxRatio)
	GCGrace    time.Duration // GC spares younger content objects; 0: none (tests)
}

// SiteLocker is what a metadata store shared by several daemons (the
// PostgreSQL one) offers so that GC never runs while any of them ingests:
// LockSites takes a shared (ingest) or exclusive (GC) lock across them.
type SiteLocker interface {
	LockSites(ctx context.Context, exclusive bool) (unlock func(), err error)
}

// SitePart is one staged file of a multi-part site upload.
type SitePart struct {
	Name string // relative path as the client sent it
	Open func() (io.ReadCloser, error)
}

// StagedPart is one part of a multi-part site staged in tmp/ (not
// fsynced: the ingest reads it back within the request and stores it
// durably through the blob store).
type StagedPart struct {
	path   string
	Size   int64
	SHA256 string // of its bytes, hex (the Idempotency-Key fingerprint)
}

// Open reads the staged part.
func (p *StagedPart) Open() (io.ReadCloser, error) { return os.Open(p.path) }

// Discard removes the staged part; safe on nil and twice.
func (p *StagedPart) Discard() {
	if p != nil && p.path != "" {
		os.Remove(p.path)
		p.path = ""
	}
}

// SiteUpload is a site upload, staged: one archive or named parts.
type SiteUpload struct {
	ProjectID int64
	FileType  report.FileType
	// FileName is the archive's file name, or for parts the report's
	// name ("" derives it from the parts: their shared top folder).
	FileName string
	Entry    string // "" picks one (site.DefaultEntries)
	Root     string // "" strips one shared top folder; "." keeps names
	Meta     report.BuildMeta
	Archive  *files.Staged // or
	Format   string        // the archive's format (ArchiveFormat)
	Parts    []SitePart
	// Streamed is the archive read and staged as it arrived
	// (StageSiteStream), or nil: CommitSite then reads Archive.
	Streamed *site.Staged
	// StreamMiss says why a streamable archive was not read as it
	// arrived: "busy" (no free slot, TryStreamSite) or "refused" (the
	// read failed, and the staged copy has the final word); for metrics.
	StreamMiss string
}

// ArchiveFormat recognises a site archive by its first bytes: "zip"
// (PK\x03\x04, or PK\x05\x06 for an empty one), "tar.gz" (gzip),
// "tar.zst" (a zstd frame), "tar" ("ustar" at offset 257); "" for anything
// else.
func ArchiveFormat(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return "zip"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "tar.gz"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "tar.zst"
	case len(head) >= 262 && string(head[257:262]) == "ustar":
		return "tar"
	}
	return ""
}

// IsSiteArchive tells whether a staged single upload of type t named
// fileName is a site, and in which archive format: an archive (by its
// first bytes) declared html. The name is only a hint, one way: a name
// ending in .html or .htm keeps the upload a single file (whose content
// checks then apply). An archive declared as another type is refused with
// a message saying so, unless the type's own container is that archive
// format (a .pptx is a zip: report.TypeInfo.Container) and it stays a
// single file.
func IsSiteArchive(st *files.Staged, t report.FileType, fileName string) (string, error) {
	f := ArchiveFormat(st.Head)
	ext := strings.ToLower(path.Ext(fileName))
	switch {
	case f == "" || string(t.Info().Container) == f || ext == ".html" || ext == ".htm":
		return "", nil
	case t != report.HTML:
		return "", report.Errorf(report.Validation, "the file is a %s archive, which makes a site report: a site takes fileType html, not %q", f, t)
	}
	return f, nil
}

// SiteLimits returns the configured site limits, defaults filled in.
func (s *Service) SiteLimits() SiteLimits {
	l := s.cfg.Sites
	if l.MaxEntries <= 0 {
		l.MaxEntries = site.DefaultMaxEntries
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = site.DefaultMaxBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = site.DefaultMaxRatio
	}
	return l
}

// StagePart stages one part of a multi-part site upload in tmp/: at most
// room bytes (room >= 0), more is PayloadTooLarge (the site's MaxBytes).
func (s *Service) StagePart(r io.Reader, room int64) (*StagedPart, error) {
	f, err := os.CreateTemp(s.tempDir(), "part-*")
	if err != nil {
		return nil, report.Wrap(report.Storage, err, "cannot store the file")
	}
	p := &StagedPart{path: f.Name()}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, room+1))
	if cerr := f.Close(); err == nil && cerr != nil {
		err = report.Wrap(report.Storage, cerr, "cannot store the file")
	}
	switch {
	case err != nil:
		p.Discard()
		return nil, err // the caller maps multipart errors
	case n > room:
		p.Discard()
		return nil, report.Errorf(report.PayloadTooLarge, "the site expands to more than %d bytes", s.SiteLimits().MaxBytes)
	}
	p.Size, p.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	return p, nil
}

// lockSites takes the ingest (shared) or GC (exclusive) side of the site
// lock: the service's own, then the store's across daemons if it has one.
func (s *Service) lockSites(ctx context.Context, exclusive bool) (func(), error) {
	if exclusive {
		s.siteMu.Lock()
	} else {
		s.siteMu.RLock()
	}
	local := func() {
		if exclusive {
			s.siteMu.Unlock()
		} else {
			s.siteMu.RUnlock()
		}
	}
	l, ok := s.meta.(SiteLocker)
	if !ok {
		return local, nil
	}
	unlock, err := l.LockSites(ctx, exclusive)
	if err != nil {
		local()
		return nil, report.StoreError(err)
	}
	return func() { unlock(); local() }, nil
}

// CommitSite validates and stores a staged site: reserve the id, ingest
// (files content-addressed, the manifest at sites/<id>.json last), then
// commit the row; the reply follows the commit. A failure after the
// manifest removes it, leaving content objects to GC: nothing is visible
// and nothing half-stored is referenced.
func (s *Service) CommitSite(ctx context.Context, in SiteUpload) (report.Report, error) {
	defer in.Streamed.Discard() // whatever returns first; nothing once Finish stored it
	if in.FileType != report.HTML {
		return report.Report{}, report.Errorf(report.Validation, "a site report takes fileType html, not %q", in.FileType)
	}
	name := in.FileName
	if name == "" {
		name = partsName(in.Parts, in.Root)
	}
	name, err := BaseName(name)
	if err != nil {
		return report.Report{}, err
	}
	if err := checkBuildMeta(&in.Meta); err != nil {
		return report.Report{}, err
	}
	var src site.Source
	switch {
	case in.Archive != nil:
		f, err := in.Archive.Open()
		if err != nil {
			return report.Report{}, report.Wrap(report.Storage, err, "cannot read the upload")
		}
		defer f.Close()
		switch in.Format {
		case "zip":
			src = site.Zip(f, in.Archive.Size)
		case "tar.gz":
			src = site.TarGz(f, in.Archive.Size)
		case "tar.zst":
			src = site.TarZst(f, in.Archive.Size)
		case "tar":
			src = site.Tar(f, in.Archive.Size)
		default:
			return report.Report{}, report.Errorf(report.Validation, "not a site archive (.zip, .tar.gz, .tgz, .tar.zst or .tar)")
		}
	case len(in.Parts) > 0:
		parts := make([]site.Part, len(in.Parts))
		for i, p := range in.Parts {
			parts[i] = site.Part{Name: p.Name, Open: p.Open}
		}
		src = site.Parts(parts...)
	default:
		return report.Report{}, report.Errorf(report.Validation, "file is required")
	}
	if _, err := s.meta.Project(ctx, in.ProjectID); err != nil {
		return report.Report{}, err
	}
	unlock, err := s.lockSites(ctx, false)
	if err != nil {
		return report.Report{}, err
	}
	defer unlock()
	id, err := s.meta.NextReportID(ctx)
	if err != nil {
		return report.Report{}, err
	}
	key := manifestKey(id)
	// Background compression waits until the row is committed: its
	// fsyncs and CPU would otherwise slow the batch's syncfs, detection
	// and the commit the answer waits for.
	ingested := s.variants.ingest()
	defer ingested()
	opt := s.siteOptions()
	opt.ManifestKey, opt.Entry, opt.Root = key, in.Entry, in.Root
	var m site.Manifest
	var det detection
	gone := false
	if in.Streamed != nil {
		m, det, err = s.finishStreamed(ctx, in.Streamed, opt)
		if gone = errors.Is(err, site.ErrGone); gone {
			s.log.Info("site read as it arrived counted on a file GC removed since; ingesting the staged copy", "report", id)
		}
	}
	if in.Streamed == nil || gone {
		m, err = site.Ingest(ctx, s.blobs, src, opt)
		if err == nil {
			det = s.detectSite(ctx, id, m)
		}
	}
	if err != nil {
		return report.Report{}, err
	}
	rec := report.ReportRecord{
		Report: report.Report{ID: id, ProjectID: in.ProjectID, FileName: name, FileType: report.HTML,
			FilePath: report.SiteFilePath(id, m.Entry), UploadTime: report.LocalTime{Time: s.cfg.Clock.NowLocal()},
			Kind: report.KindSite, Entry: m.Entry, Files: len(m.Files), Bytes: m.TotalBytes},
		Size: m.TotalBytes, SHA256: m.SHA256, // of the manifest's bytes: names the site's content
	}
	rec.Name = siteReportName(name, m.Root)
	rec.Generator, rec.Summary, rec.Results = det.generator, det.summary, det.results
	if in.Meta.Name != nil && *in.Meta.Name != "" {
		rec.Name = *in.Meta.Name
	}
	rec.Branch, rec.Commit, rec.BuildURL, rec.BuildID = nonEmpty(in.Meta.Branch), nonEmpty(in.Meta.Commit), nonEmpty(in.Meta.BuildURL), nonEmpty(in.Meta.BuildID)
	out, err := s.meta.CreateReport(ctx, rec)
	if err != nil {
		if derr := site.Delete(context.WithoutCancel(ctx), s.blobs, key); derr != nil {
			s.log.Warn("remove site manifest", "report", id, "err", derr) // the start-up sweep removes it
		}
		return report.Report{}, err
	}
	if s.cfg.ConvertOnUpload {
		s.pdfs.Prepare(out) // the entry page, into the shared cache if there is one
	}
	s.variants.enqueue(variantJob{manifest: key})
	if s.cfg.OnSiteIngest != nil {
		s.cfg.OnSiteIngest(s.ingestPath(in, gone))
	}
	return out.Report, nil
}

// ingestPath names how a stored site was read (Config.OnSiteIngest):
// "streamed", or "staged" with why: "gc" (a file the streamed read counted
// on was removed meanwhile), "parts" (file parts, not an archive),
// "format" (a zip: its directory comes last), "store" (a store without
// batches: S3), SiteUpload.StreamMiss, or "undeclared" (fileType=html
// came after the file part, too late to read it as it arrived).
func (s *Service) ingestPath(in SiteUpload, gone bool) (path, reason string) {
	_, batches := s.blobs.(blob.Batcher)
	switch {
	case in.Streamed != nil && !gone:
		return "streamed", ""
	case gone:
		return "staged", "gc"
	case in.Archive == nil:
		return "staged", "parts"
	case !site.Streamable(in.Format):
		return "staged", "format"
	case !batches:
		return "staged", "store"
	case in.StreamMiss != "":
		return "staged", in.StreamMiss
	}
	return "staged", "undeclared"
}

// finishStreamed stores a site read as it arrived while its generator and
// summary are detected from the staged files: detection reads (CPU) while
// the commit waits for the disk.
func (s *Service) finishStreamed(ctx context.Context, st *site.Staged, opt site.Options) (site.Manifest, detection, error) {
	m, err := st.Manifest(opt)
	if err != nil {
		st.Discard()
		return site.Manifest{}, detection{}, err
	}
	detected := make(chan detection, 1)
	go func() { detected <- detectManifest(m, site.NewView(m, st.Open).FS(ctx)) }()
	stored, err := st.Finish(ctx, opt)
	det := <-detected
	return stored, det, err
}

// siteOptions are the ingest options of the configured site limits.
func (s *Service) siteOptions() site.Options {
	lim := s.SiteLimits()
	opt := site.Options{MaxEntries: lim.MaxEntries, MaxBytes: lim.MaxBytes, MaxRatio: lim.MaxRatio, TempDir: s.tempDir()}
	if _, shared := s.meta.(SiteLocker); !shared {
		opt.GCRuns = s.gcRuns.Load // only this daemon's GC removes site objects
	}
	return opt
}

// maxSiteStreams bounds the sites read as they arrive at once: each holds
// a zstd window (up to 8 MiB) and up to 16 MiB of small files in flight
// for as long as its upload lasts. Past it, uploads are staged first, as
// zips always are.
const maxSiteStreams = 4

// TryStreamSite tells whether a site may be read as it arrives now
// (StageSiteStream), and if so returns the release to call once that read
// returned. It needs a store with batches (the local store's), which make
// nothing visible before the commit, and a free slot.
func (s *Service) TryStreamSite() (release func(), ok bool) {
	if _, ok := s.blobs.(blob.Batcher); !ok {
		return nil, false
	}
	select {
	case s.siteStreams <- struct{}{}:
		return func() { <-s.siteStreams }, true
	default:
		return nil, false
	}
}

// StageSiteStream reads a site archive of format (site.Streamable) as it
// arrives, checks it and stages its files, so that CommitSite, once the
// whole upload is read, has only to commit them (SiteUpload.Streamed).
// Its refusals are not final: the ratio is checked against the bytes
// arrived so far, so the caller ingests the staged archive instead.
//
// Background compression goes on meanwhile (the arrival is the network's
// pace); CommitSite holds it off for the commit.
func (s *Service) StageSiteStream(ctx context.Context, r io.Reader, format string) (*site.Staged, error) {
	return site.Stage(ctx, s.blobs, site.Stream(r, format), s.siteOptions())
}

// tempDir is where ingests, parts and compressed copies are staged: the
// blob store's staging area (blob.Stager; the local store's is tmp/ of the
// data directory, on its file system, so files are adopted by rename),
// swept at start-up.
func (s *Service) tempDir() string { return blob.TempDir(s.blobs) }

// partsName names a multi-part site: the root folder it was given, or the
// one top folder all parts share, else "site".
func partsName(parts []SitePart, root string) string {
	if r := strings.Trim(root, "/"); r != "" && r != "." {
		return path.Base(r)
	}
	top := ""
	for i, p := range parts {
		t, _, ok := strings.Cut(p.Name, "/")
		if !ok || (i > 0 && t != top) {
			return "site"
		}
		top = t
	}
	if top == "" || top == "." || top == ".." {
		return "site"
	}
	return top
}

// siteReportName is a site's derived report name: the folder of the
// upload that became the site (the archive's one top folder, stripped, or
// the root given: "playwright-report" of pw.zip holding
// playwright-report/index.html), else the archive's stem ("allure-report"
// of allure-report.zip, "htmlcov" of a folder reportctl uploads as
// htmlcov), never the made-up name of a generic archive.
func siteReportName(fileName, root string) string {
	if root != "" && root != "." {
		return report.NameFromFolder(path.Base(root))
	}
	return report.NameFromFolder(siteStem(fileName))
}

// siteStem is a site's file name without its archive extension.
func siteStem(name string) string {
	lower := strings.ToLower(name)
	for _, ext := range []string{".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar", ".zip"} {
		if strings.HasSuffix(lower, ext) && len(name) > len(ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return name
}

// SiteZipName is the download name of a site report: its file name
// without an archive extension, plus .zip.
func SiteZipName(fileName string) string { return siteStem(fileName) + ".zip" }

// SiteManifest returns what the content origin serves for report id: the
// stored manifest of a site report, or a one-file manifest for a
// single-file html report (Entry = ContentEntry's name for it, one File
// with the report's sha256/size, ContentType text/html; charset=utf-8).
// Any other report: report.NotFound error.
func (s *Service) SiteManifest(ctx context.Context, id int64) (site.Manifest, error) {
	rec, err := s.meta.Report(ctx, id)
	if err != nil {
		return site.Manifest{}, err
	}
	return s.manifestOf(ctx, rec)
}

func (s *Service) manifestOf(ctx context.Context, rec report.ReportRecord) (site.Manifest, error) {
	switch {
	case rec.IsSite():
		m, err := site.Load(ctx, s.blobs, manifestKey(rec.ID))
		if errors.Is(err, blob.ErrNotFound) {
			return m, report.Wrap(report.Storage, err, "the site's manifest is missing")
		}
		return m, err
	case rec.FileType == report.HTML:
		entry, _ := ContentEntry(&rec.Report)
		return site.Manifest{Version: site.Version, Entry: entry, TotalBytes: rec.Size,
			Files: []site.File{{Path: entry, SHA256: rec.SHA256, Size: rec.Size, ContentType: report.HTML.ContentType()}}}, nil
	}
	return site.Manifest{}, report.Errorf(report.NotFound, "report %d is a %s file, not a site or an html report", rec.ID, rec.FileType)
}

// ContentEntry is the one rule for the file report r opens on in the
// content origin, which both the manifest (SiteManifest) and the links
// to it (siteUrl) follow: a site's entry ("" for its generated listing);
// for a single-file html report its one file, named as its file name's
// base, or "index.html" when that base is no valid site name
// (site.CheckName refuses e.g. "C:report.html", which an upload's
// fileName may be). ok is false for reports the content origin does not
// serve (pdf, md, ppt, pptx).
func ContentEntry(r *report.Report) (file string, ok bool) {
	switch {
	case r.IsSite():
		return r.Entry, true
	case r.FileType == report.HTML:
		name := path.Base(r.FileName)
		if site.CheckName(name) != nil {
			name = "index.html"
		}
		return name, true
	}
	return "", false
}

// OpenSiteFile opens one file of that manifest (a site's content object or
// the single-file report's blob), or with f.Encoding its precompressed
// variant (site.VariantKey; NotFound if there is none). A site's files are content objects; a
// single-file html report's one file is its stored file, which is where
// the content key does not lead (no site holds the same bytes).
func (s *Service) OpenSiteFile(ctx context.Context, id int64, f site.File) (blob.Object, error) {
	o, err := s.blobs.Open(ctx, f.Key())
	if err == nil || !errors.Is(err, blob.ErrNotFound) || f.Encoding != "" {
		if err != nil {
			return nil, blob.StorageErr(err, "cannot read the site's file")
		}
		return o, nil
	}
	o, err = s.open(ctx, reportPath(id, report.HTML))
	if err != nil {
		return nil, report.Wrap(report.NotFound, err, "file not found")
	}
	if o.Info().Size != f.Size {
		o.Close()
		return nil, report.Errorf(report.NotFound, "file not found")
	}
	return o, nil
}

// SiteView is the view of report id's files through manifest m (a
// site's, or SiteManifest's one-file manifest of a single-file HTML
// report): each opens through OpenSiteFile.
func (s *Service) SiteView(id int64, m site.Manifest) site.View {
	return site.NewView(m, func(ctx context.Context, f site.File) (blob.Object, error) {
		return s.OpenSiteFile(ctx, id, f)
	})
}

// OpenSite returns site report id's record and the view of its files
// (download).
func (s *Service) OpenSite(ctx context.Context, id int64) (report.ReportRecord, site.View, error) {
	rec, err := s.meta.Report(ctx, id)
	if err != nil {
		return rec, site.View{}, err
	}
	if !rec.IsSite() {
		return rec, site.View{}, report.Errorf(report.NotFound, "report %d is not a site", id)
	}
	m, err := s.manifestOf(ctx, rec)
	if err != nil {
		return rec, site.View{}, err
	}
	return rec, s.SiteView(id, m), nil
}

// removeStored removes what a deleted row owned: a file, or a site's
// manifest (its content objects go at the next GC, which the caller runs).
func (s *Service) removeStored(rec report.ReportRecord) (site bool) {
	if !rec.IsSite() {
		s.removeFile(rec.FilePath)
		return false
	}
	s.dropManifest(rec.ID)
	return true
}

// manifestKey is the blob key of site report id's manifest (its API path
// is report.SiteManifestPath).
func manifestKey(id int64) string { return site.ManifestKey(strconv.FormatInt(id, 10)) }

func (s *Service) dropManifest(id int64) {
	if err := site.Delete(context.Background(), s.blobs, manifestKey(id)); err != nil && !errors.Is(err, blob.ErrNotFound) {
		s.log.Warn("remove site manifest", "report", id, "err", err) // the start-up sweep removes it
	}
}

// collectSites runs site GC after a site was deleted (gcSites); calls
// coalesce: a caller whose manifest was already gone when a GC started
// waits for it instead of running another. Errors are logged: the row is
// gone already, and the next GC retries.
func (s *Service) collectSites(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	s.gcWanted.Add(1)
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	if s.gcWanted.Load() == 0 {
		return // a GC that started after our manifest went has run
	}
	s.gcWanted.Store(0)
	st, err := s.gcSites(ctx)
	if err != nil {
		s.log.Warn("site GC", "err", err)
		return
	}
	if st.Removed > 0 {
		s.log.Info("site GC removed unreferenced files", "objects", st.Removed, "bytes", st.RemovedBytes)
	}
}

// gcSites removes the site content objects no manifest references and
// older than sites.gc_grace (site.GC), under the exclusive site lock:
// never while an ingest runs, in this daemon or (PostgreSQL) any other.
// The caller holds gcMu (collectSites, after a delete).
func (s *Service) gcSites(ctx context.Context) (site.GCStats, error) {
	unlock, err := s.lockSites(ctx, true)
	if err != nil {
		return site.GCStats{}, err
	}
	defer unlock()
	s.gcRuns.Add(1)
	defer s.gcRuns.Add(1)
	return site.GC(ctx, s.blobs, s.gcOptions())
}

// gcOptions are site GC's options: sites.gc_grace.
func (s *Service) gcOptions() site.GCOptions {
	grace := s.cfg.Sites.GCGrace
	if grace <= 0 {
		grace = time.Nanosecond // none (site.GC reads 0 as its default)
	}
	return site.GCOptions{Grace: grace}
}

// ReportRecord is report id's stored record (the HTTP layer's site routes).
func (s *Service) ReportRecord(ctx context.Context, id int64) (report.ReportRecord, error) {
	return s.meta.Report(ctx, id)
}
