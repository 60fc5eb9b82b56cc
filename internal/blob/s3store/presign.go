package s3store

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/reportd/reportd/internal/blob"
)

// PresignGet returns a presigned GET URL of key, valid for ttl, whose
// response carries exactly the given Content-Disposition and Content-Type
// (S3's response-content-disposition and response-content-type; empty:
// the object's own). Signing is local: the server is not contacted, so the
// caller checks that the object exists first if it must. Whoever holds the
// URL can read the object until it expires.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration, disposition, contentType string) (*url.URL, error) {
	if err := blob.CheckKey(key); err != nil {
		return nil, err
	}
	params := url.Values{}
	if disposition != "" {
		params.Set("response-content-disposition", disposition)
	}
	if contentType != "" {
		params.Set("response-content-type", contentType)
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, s.name(key), ttl, params)
	if err != nil {
		return nil, fmt.Errorf("s3store: presign %s: %w", key, err)
	}
	return u, nil
}
