// Package s3store is a blob.Store on an S3 bucket (minio-go v7): objects
// live under an optional key prefix inside the bucket.
//
// Put streams in parts of a fixed size (Config.PartSize, 16 MiB by
// default) and never holds more than one part in memory: an object smaller
// than a part is one PutObject, a larger one a multipart upload that is
// aborted if the reader fails, the size is wrong or ctx is cancelled, so a
// failed Put leaves neither an object nor an open upload. IfNoneMatch is
// S3's conditional write (If-None-Match: * on PutObject and on
// CompleteMultipartUpload): a concurrent creator that loses gets ErrExists
// and the winner's object stays whole. AbortStale aborts the uploads that a
// crashed process left open.
//
// Open returns a minio.Object, which seeks and reads ranges with ranged
// GETs (http.ServeContent serves Range requests from it); it is pinned to
// the ETag seen when opening, so a concurrent overwrite fails the read
// instead of mixing two versions.
package s3store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/reportd/reportd/internal/blob"
)

// Config says where the bucket is.
type Config struct {
	Endpoint  string // host:port
	Bucket    string
	Region    string // "" lets the client ask the server
	AccessKey string
	SecretKey string
	UseTLS    bool
	// Prefix is prepended to every key inside the bucket ("" or a key
	// prefix; a trailing slash is added).
	Prefix string
	// PartSize is the multipart part size and the most one Put holds in
	// memory (default DefaultPartSize; at least MinPartSize, S3's minimum).
	PartSize int64
	// TempDir is the local directory uploads are staged in before they
	// are streamed to the bucket (blob.Stager; "" is the system's temp
	// directory). reportd: <data>/tmp, cleared at start-up.
	TempDir string
}

const (
	DefaultPartSize = 16 << 20
	MinPartSize     = 5 << 20
	// firstRead is what Put reads before deciding a small object fits one
	// request, so a small unknown-size Put does not allocate a whole part.
	firstRead = 64 << 10
)

// Store is the S3 blob.Store.
type Store struct {
	client   *minio.Client
	probe    *minio.Client // the same, without retries: Probe and Diagnose
	endpoint string
	access   string
	core     minio.Core
	bucket   string
	prefix   string
	partSize int64
	tempDir  string
}

var (
	_ blob.Store         = (*Store)(nil)
	_ blob.Copier        = (*Store)(nil)
	_ blob.PrefixDeleter = (*Store)(nil)
	_ blob.Stager        = (*Store)(nil)
)

// New makes a store on cfg's bucket; it does not contact the server.
func New(cfg Config) (*Store, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("s3store: endpoint and bucket are required")
	}
	if err := blob.CheckPrefix(cfg.Prefix); err != nil {
		return nil, fmt.Errorf("s3store: prefix: %w", err)
	}
	prefix := cfg.Prefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	ps := cfg.PartSize
	if ps == 0 {
		ps = DefaultPartSize
	}
	if ps < MinPartSize {
		return nil, fmt.Errorf("s3store: part size %d is below S3's minimum %d", ps, MinPartSize)
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.UseTLS,
		Region: cfg.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("s3store: %w", err)
	}
	p, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:      credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:     cfg.UseTLS,
		Region:     cfg.Region,
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("s3store: %w", err)
	}
	tmp := cfg.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	} else if tmp, err = filepath.Abs(tmp); err != nil {
		return nil, fmt.Errorf("s3store: temp directory: %w", err)
	} else if err := os.MkdirAll(tmp, 0o750); err != nil {
		return nil, fmt.Errorf("s3store: temp directory: %w", err)
	}
	return &Store{client: c, probe: p, endpoint: cfg.Endpoint, access: cfg.AccessKey, core: minio.Core{Client: c},
		bucket: cfg.Bucket, prefix: prefix, partSize: ps, tempDir: tmp}, nil
}

// TempDir is where uploads are staged (blob.Stager): local scratch space,
// streamed to the bucket by blob.PutFile.
func (s *Store) TempDir() string { return s.tempDir }

// Client is the underlying minio client (for tests and admin tools).
func (s *Store) Client() *minio.Client { return s.client }

func (s *Store) name(key string) string { return s.prefix + key }

// mapErr turns an S3 error about key into the blob errors.
func mapErr(err error, key, msg string) error {
	if err == nil {
		return nil
	}
	r := minio.ToErrorResponse(err)
	switch {
	case r.Code == "NoSuchKey" || (r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket" && r.Code != "NoSuchUpload"):
		return blob.NotFound(key)
	case r.Code == "PreconditionFailed" || r.StatusCode == http.StatusPreconditionFailed:
		return blob.Exists(key)
	}
	if out := outageErr(err, key); out != nil {
		return out
	}
	return blob.StorageErr(fmt.Errorf("s3 %s: %w", key, err), msg)
}

// fill reads into buf until it is full or r ends; eof reports the end.
func fill(r io.Reader, buf []byte) (n int, eof bool, err error) {
	n, err = io.ReadFull(r, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return n, true, nil
	}
	return n, false, err
}

func sizeErr(key string, got, want int64) error {
	return blob.StorageErr(fmt.Errorf("s3 %s: read %d bytes, want %d", key, got, want), "cannot store the file")
}

// Put implements blob.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, opt blob.PutOptions) (blob.Info, error) {
	if err := blob.CheckKey(key); err != nil {
		return blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, blob.StorageErr(err, "cannot store the file")
	}
	r = blob.ContextReader(ctx, r)
	// The first read is small unless the size says the object is larger.
	first := int64(firstRead)
	if opt.Size > 0 {
		first = opt.Size + 1 // one more byte detects a reader that gives too much
	}
	buf := make([]byte, min(first, s.partSize))
	n, eof, err := fill(r, buf)
	if err != nil {
		return blob.Info{}, blob.StorageErr(err, "cannot store the file")
	}
	if !eof && len(buf) < int(s.partSize) {
		// Larger than the first read: go on into a whole part.
		big := make([]byte, s.partSize)
		copy(big, buf[:n])
		var m int
		m, eof, err = fill(r, big[n:])
		if err != nil {
			return blob.Info{}, blob.StorageErr(err, "cannot store the file")
		}
		buf, n = big, n+m
	}
	if opt.Size > 0 && int64(n) > opt.Size {
		return blob.Info{}, sizeErr(key, int64(n), opt.Size)
	}
	if eof {
		if opt.Size > 0 && int64(n) != opt.Size {
			return blob.Info{}, sizeErr(key, int64(n), opt.Size)
		}
		return s.putSingle(ctx, key, buf[:n], opt)
	}
	return s.putMultipart(ctx, key, r, buf, opt)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func putOptions(opt blob.PutOptions, conditional bool) minio.PutObjectOptions {
	// The payload's SHA-256 is computed from the buffer and signed as is:
	// minio-go's streaming (aws-chunked) signature would otherwise
	// allocate about a sixth of every part again on plain HTTP.
	o := minio.PutObjectOptions{ContentType: opt.ContentType, DisableContentSha256: true}
	if conditional && opt.IfNoneMatch {
		o.SetMatchETagExcept("*")
	}
	return o
}

func (s *Store) info(key string, size int64, ui minio.UploadInfo) blob.Info {
	mt := ui.LastModified
	if mt.IsZero() {
		mt = time.Now()
	}
	return blob.Info{Key: key, Size: size, ModTime: mt, ETag: ui.ETag}
}

func (s *Store) putSingle(ctx context.Context, key string, data []byte, opt blob.PutOptions) (blob.Info, error) {
	ui, err := s.core.PutObject(ctx, s.bucket, s.name(key), bytes.NewReader(data), int64(len(data)), "", sha256Hex(data), putOptions(opt, true))
	if err != nil {
		return blob.Info{}, mapErr(err, key, "cannot store the file")
	}
	return s.info(key, int64(len(data)), ui), nil
}

// putMultipart uploads buf (a full first part) and the rest of r in parts
// of len(buf), reusing buf, and completes the upload (conditionally with
// IfNoneMatch). Any failure aborts the upload.
func (s *Store) putMultipart(ctx context.Context, key string, r io.Reader, buf []byte, opt blob.PutOptions) (_ blob.Info, err error) {
	obj := s.name(key)
	if opt.IfNoneMatch {
		// Not the guard (Complete is conditional), only a way not to
		// upload a large object that is already there.
		if _, err := s.client.StatObject(ctx, s.bucket, obj, minio.StatObjectOptions{}); err == nil {
			return blob.Info{}, blob.Exists(key)
		}
	}
	id, err := s.core.NewMultipartUpload(ctx, s.bucket, obj, putOptions(opt, false))
	if err != nil {
		return blob.Info{}, mapErr(err, key, "cannot store the file")
	}
	defer func() {
		if err != nil {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if aerr := s.core.AbortMultipartUpload(actx, s.bucket, obj, id); aerr != nil {
				err = fmt.Errorf("%w (and aborting the upload failed: %v)", err, aerr)
			}
		}
	}()
	var parts []minio.CompletePart
	var total int64
	n, eof := len(buf), false
	for num := 1; n > 0; num++ {
		total += int64(n)
		if opt.Size > 0 && total > opt.Size {
			return blob.Info{}, sizeErr(key, total, opt.Size)
		}
		p, err := s.core.PutObjectPart(ctx, s.bucket, obj, id, num, bytes.NewReader(buf[:n]), int64(n),
			minio.PutObjectPartOptions{Sha256Hex: sha256Hex(buf[:n]), DisableContentSha256: true})
		if err != nil {
			return blob.Info{}, mapErr(err, key, "cannot store the file")
		}
		parts = append(parts, minio.CompletePart{PartNumber: num, ETag: p.ETag,
			ChecksumCRC32: p.ChecksumCRC32, ChecksumCRC32C: p.ChecksumCRC32C, ChecksumSHA1: p.ChecksumSHA1,
			ChecksumSHA256: p.ChecksumSHA256, ChecksumCRC64NVME: p.ChecksumCRC64NVME})
		if eof {
			break
		}
		if n, eof, err = fill(r, buf); err != nil {
			return blob.Info{}, blob.StorageErr(err, "cannot store the file")
		}
	}
	if opt.Size > 0 && total != opt.Size {
		return blob.Info{}, sizeErr(key, total, opt.Size)
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, blob.StorageErr(err, "cannot store the file")
	}
	ui, err := s.core.CompleteMultipartUpload(ctx, s.bucket, obj, id, parts, putOptions(opt, true))
	if err != nil {
		return blob.Info{}, mapErr(err, key, "cannot store the file")
	}
	return s.info(key, total, ui), nil
}

func (s *Store) objInfo(key string, oi minio.ObjectInfo) blob.Info {
	return blob.Info{Key: key, Size: oi.Size, ModTime: oi.LastModified, ETag: oi.ETag}
}

// Stat implements blob.Store.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := blob.CheckKey(key); err != nil {
		return blob.Info{}, err
	}
	oi, err := s.client.StatObject(ctx, s.bucket, s.name(key), minio.StatObjectOptions{})
	if err != nil {
		return blob.Info{}, mapErr(err, key, "cannot read the file")
	}
	return s.objInfo(key, oi), nil
}

// object is a minio.Object that also seeks past the end, as io.Seeker
// allows (minio-go refuses it; http.ServeContent never does it, but the
// interface promises it). pos mirrors the minio.Object's offset.
type object struct {
	obj  *minio.Object
	info blob.Info
	pos  int64
}

func (o *object) Info() blob.Info { return o.info }

func (o *object) Read(p []byte) (int, error) {
	if o.pos >= o.info.Size {
		return 0, io.EOF
	}
	n, err := o.obj.Read(p)
	o.pos += int64(n)
	return n, err
}

func (o *object) ReadAt(p []byte, off int64) (int, error) { return o.obj.ReadAt(p, off) }

func (o *object) Close() error { return o.obj.Close() }

func (o *object) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = o.pos + offset
	case io.SeekEnd:
		abs = o.info.Size + offset
	default:
		return 0, errors.New("s3store: Seek: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("s3store: Seek: negative position")
	}
	if abs <= o.info.Size {
		if _, err := o.obj.Seek(abs, io.SeekStart); err != nil {
			return 0, err
		}
	}
	o.pos = abs
	return abs, nil
}

// Open implements blob.Store.
func (s *Store) Open(ctx context.Context, key string) (blob.Object, error) {
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	opts := minio.GetObjectOptions{}
	if info.ETag != "" {
		opts.SetMatchETag(info.ETag)
	}
	o, err := s.client.GetObject(ctx, s.bucket, s.name(key), opts)
	if err != nil {
		return nil, mapErr(err, key, "cannot read the file")
	}
	return &object{obj: o, info: info}, nil
}

// Delete implements blob.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blob.CheckKey(key); err != nil {
		return err
	}
	err := s.client.RemoveObject(ctx, s.bucket, s.name(key), minio.RemoveObjectOptions{})
	if err != nil && !errors.Is(mapErr(err, key, ""), blob.ErrNotFound) {
		return mapErr(err, key, "cannot remove the file")
	}
	return nil
}

// Walk implements blob.Store; it lists in key order.
func (s *Store) Walk(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	if err := blob.CheckPrefix(prefix); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for oi := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.name(prefix), Recursive: true}) {
		if oi.Err != nil {
			return mapErr(oi.Err, prefix, "cannot list the files")
		}
		key := strings.TrimPrefix(oi.Key, s.prefix)
		if strings.HasSuffix(key, "/") || blob.CheckKey(key) != nil {
			continue // a directory marker (posix-backed servers), not an object
		}
		if err := fn(s.objInfo(key, oi)); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Copy implements blob.Copier with a server-side CopyObject. The
// destination is checked first and the copy is sent with If-None-Match: *;
// on a server that ignores that header on CopyObject, two concurrent
// copies to one new key race between the check and the copy (both write
// the same bytes, so nothing is lost but the ErrExists).
func (s *Store) Copy(ctx context.Context, src, dst string) error {
	if err := blob.CheckKey(src); err != nil {
		return err
	}
	if err := blob.CheckKey(dst); err != nil {
		return err
	}
	if _, err := s.Stat(ctx, dst); err == nil {
		return blob.Exists(dst)
	} else if !errors.Is(err, blob.ErrNotFound) {
		return err
	}
	dopts := minio.CopyDestOptions{Bucket: s.bucket, Object: s.name(dst)}
	_, err := s.client.CopyObject(ctx, dopts, minio.CopySrcOptions{Bucket: s.bucket, Object: s.name(src)})
	if err != nil {
		r := minio.ToErrorResponse(err)
		if r.Code == "NoSuchKey" || r.StatusCode == http.StatusNotFound {
			return blob.NotFound(src)
		}
		return mapErr(err, dst, "cannot copy the file")
	}
	return nil
}

// DeletePrefix implements blob.PrefixDeleter: a listing fed to
// multi-object deletes.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) error {
	if err := blob.CheckPrefix(prefix); err != nil {
		return err
	}
	if prefix == "" {
		return blob.DeletePrefix(ctx, s, prefix) // the helper's refusal
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	list := s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.name(prefix), Recursive: true})
	var listErr error
	objs := make(chan minio.ObjectInfo)
	go func() {
		defer close(objs)
		for oi := range list {
			if oi.Err != nil {
				listErr = oi.Err
				return
			}
			select {
			case objs <- oi:
			case <-ctx.Done():
				return
			}
		}
	}()
	for e := range s.client.RemoveObjects(ctx, s.bucket, objs, minio.RemoveObjectsOptions{}) {
		if e.Err != nil && !errors.Is(mapErr(e.Err, e.ObjectName, ""), blob.ErrNotFound) {
			cancel()
			return mapErr(e.Err, strings.TrimPrefix(e.ObjectName, s.prefix), "cannot remove the files")
		}
	}
	if listErr != nil {
		return mapErr(listErr, prefix, "cannot list the files")
	}
	return nil
}

// Upload is an open multipart upload.
type Upload struct {
	Key       string // without the store's prefix
	UploadID  string
	Initiated time.Time
}

// Uploads lists the open multipart uploads below the store's prefix.
func (s *Store) Uploads(ctx context.Context) ([]Upload, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ups []Upload
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, s.prefix, true) {
		if u.Err != nil {
			return nil, blob.StorageErr(fmt.Errorf("s3 list uploads: %w", u.Err), "cannot list the uploads")
		}
		ups = append(ups, Upload{Key: strings.TrimPrefix(u.Key, s.prefix), UploadID: u.UploadID, Initiated: u.Initiated})
	}
	return ups, nil
}

// AbortStale aborts the multipart uploads below the store's prefix that
// were initiated more than olderThan ago (uploads a crashed process left:
// a live Put finishes or aborts its own), and says how many it aborted.
func (s *Store) AbortStale(ctx context.Context, olderThan time.Duration) (int, error) {
	ups, err := s.Uploads(ctx)
	if err != nil {
		return 0, err
	}
	cutoff := time.Now().Add(-olderThan)
	n := 0
	for _, u := range ups {
		if !u.Initiated.Before(cutoff) {
			continue
		}
		err := s.core.AbortMultipartUpload(ctx, s.bucket, s.name(u.Key), u.UploadID)
		if err != nil && minio.ToErrorResponse(err).Code != "NoSuchUpload" {
			return n, blob.StorageErr(fmt.Errorf("s3 abort upload %s of %s: %w", u.UploadID, u.Key, err), "cannot abort the upload")
		}
		n++
	}
	return n, nil
}
