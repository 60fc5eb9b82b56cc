package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sniff"
)

// stageCover stages an uploaded or decoded image and checks it is one.
func (s *Service) stageCover(r io.Reader, name string) (*files.Staged, string, error) {
	st, err := files.Stage(s.blobs, r, s.cfg.MaxCoverBytes)
	if err != nil {
		if report.IsKind(err, report.PayloadTooLarge) {
			return nil, "", report.Errorf(report.PayloadTooLarge, "coverImage exceeds the limit of %d bytes", s.cfg.MaxCoverBytes)
		}
		return nil, "", err
	}
	ext := sniff.ImageExt(st.Head)
	if ext == "" {
		st.Discard()
		return nil, "", report.Errorf(report.Validation, "coverImage is not a PNG, JPEG, GIF or WebP image")
	}
	return st, coverFileName(name, ext), nil
}

// coverFileName is a safe, unique name: the client's stem reduced to
// [A-Za-z0-9._-], a random suffix (so a replacement never collides with the
// file it replaces), and the extension of the detected format.
func coverFileName(name, ext string) string {
	stem := name
	if i := strings.LastIndexByte(stem, '.'); i > 0 {
		stem = stem[:i]
	}
	var b strings.Builder
	for _, r := range stem {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	clean := strings.Trim(b.String(), "_")
	if clean == "" {
		clean = "cover"
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	return clean + "-" + hex.EncodeToString(rnd[:]) + ext
}

// coverFromString resolves POST's coverImage: a data URL, an http(s) URL,
// or bare base64.
func (s *Service) coverFromString(ctx context.Context, v string) (*files.Staged, string, error) {
	v = strings.TrimSpace(v)
	switch {
	case strings.HasPrefix(v, "data:"):
		comma := strings.IndexByte(v, ',')
		if comma < 0 || !strings.HasSuffix(v[:comma], ";base64") {
			return nil, "", report.Errorf(report.Validation, "coverImage data URL must be base64 (data:image/png;base64,...)")
		}
		return s.coverFromBase64(v[comma+1:])
	case strings.HasPrefix(v, "http://"), strings.HasPrefix(v, "https://"):
		return s.fetchCover(ctx, v)
	default:
		return s.coverFromBase64(v)
	}
}

func (s *Service) coverFromBase64(b64 string) (*files.Staged, string, error) {
	b64 = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, b64)
	enc := base64.StdEncoding
	if strings.ContainsAny(b64, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(b64, "=") {
		enc = enc.WithPadding(base64.NoPadding)
	}
	if len(b64) == 0 {
		return nil, "", report.Errorf(report.Validation, "coverImage is empty")
	}
	// The JSON body holding it is already in memory (and capped), so decode whole.
	data, err := enc.DecodeString(b64)
	if err != nil {
		return nil, "", report.Errorf(report.Validation, "coverImage is neither an http(s) URL nor valid base64 image data")
	}
	return s.stageCover(bytes.NewReader(data), "cover")
}

func (s *Service) fetchCover(ctx context.Context, raw string) (*files.Staged, string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, "", report.Errorf(report.Validation, "coverImage URL is not valid")
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CoverFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", report.Errorf(report.Validation, "coverImage URL is not valid")
	}
	req.Header.Set("Accept", "image/png,image/jpeg,image/gif,image/webp")
	resp, err := s.coverClient.Do(req)
	if err != nil {
		if strings.Contains(err.Error(), errForbiddenAddr.Error()) {
			return nil, "", report.Errorf(report.Validation, "coverImage URL points at an address that is not public (loopback, private, link-local or reserved), which is not allowed")
		}
		return nil, "", report.Wrap(report.Validation, err, errCoverDownload)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The remote's status and body stay in the log: echoing them would
		// make the daemon a probe for what answers behind a URL.
		return nil, "", report.Wrap(report.Validation, fmt.Errorf("cover URL answered %s", resp.Status), errCoverDownload)
	}
	return s.stageCover(resp.Body, pathBase(u.Path))
}

func pathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// errCoverDownload is all a client learns about a failed download.
const errCoverDownload = "the coverImage URL could not be downloaded"

var errForbiddenAddr = fmt.Errorf("address not allowed for cover downloads")

// newCoverClient checks every address at dial time, so redirects and DNS
// answers that lead to internal addresses are refused as well.
func newCoverClient(allowed func(net.IP) bool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{
		Timeout: timeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip := net.ParseIP(host)
			if ip == nil || !allowed(ip) {
				return errForbiddenAddr
			}
			return nil
		},
	}
	tr := &http.Transport{
		DialContext:           dialer.DialContext,
		Proxy:                 nil,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          4,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return fmt.Errorf("too many redirects")
			}
			return nil
		},
	}
}
