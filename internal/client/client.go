// Package client is the typed HTTP client of the Report Publishing Service.
// It implements report.Service over the API, so the request and response
// types are the ones the daemon uses; reportctl and watch make no other HTTP
// calls.
package client

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/restylog"
)

// Options configure a Client. Zero durations and counts take the defaults below.
type Options struct {
	// Server is the site URL ({site_url} in the spec); a trailing /api is accepted.
	Server string
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// ConnectTimeout bounds the TCP connect (and TLS handshake) of each attempt.
	ConnectTimeout time.Duration
	// Timeout bounds one whole attempt, including sending and reading bodies.
	// Streams (preview, download, pdf) are bounded only until headers arrive,
	// so large files are not cut off.
	Timeout time.Duration
	// Retries is how many times a failed attempt is repeated; negative means none.
	Retries int
	// RetryWait is the first backoff; it doubles each attempt up to RetryMaxWait.
	RetryWait    time.Duration
	RetryMaxWait time.Duration
	// OnRetry, when set, is told of every wait before a retry, from the
	// goroutine making the request.
	OnRetry func(Retry)
	// UserAgent is sent on every request.
	UserAgent string
}

// Defaults, chosen so that a daemon being restarted (systemd, a deploy) has
// at least 15 s to come back: 8 retries wait 1, 2, 4, 5, 5, 5, 5, 5 s, each
// jittered down by up to half, so 16 s to 32 s in all (RetryWindow).
const (
	DefaultServer         = "http://127.0.0.1:8080"
	DefaultConnectTimeout = 10 * time.Second
	DefaultTimeout        = 5 * time.Minute
	DefaultRetries        = 8
	DefaultRetryWait      = time.Second
	DefaultRetryMaxWait   = 5 * time.Second
)

// Client talks to one server. It is safe for concurrent use.
type Client struct {
	http *resty.Client
	site string // site URL without a trailing slash
	opts Options
}

var _ report.Service = (*Client)(nil)

// New checks opts and builds a client; it makes no request.
func New(opts Options) (*Client, error) {
	site, err := SiteURL(opts.Server)
	if err != nil {
		return nil, err
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.Timeout < 0 {
		opts.Timeout = 0
	}
	if opts.RetryWait <= 0 {
		opts.RetryWait = DefaultRetryWait
	}
	if opts.RetryMaxWait < opts.RetryWait {
		opts.RetryMaxWait = max(DefaultRetryMaxWait, opts.RetryWait)
	}
	if opts.Retries < 0 {
		opts.Retries = 0
	}
	dialer := &net.Dialer{Timeout: opts.ConnectTimeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialReserved(dialer.DialContext),
		TLSHandshakeTimeout: opts.ConnectTimeout,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	rc := resty.New().
		SetLogger(restylog.Silent{}). // errors are ours to tell, once (resty logs them too)
		SetTransport(transport).
		SetBaseURL(site+"/api").
		// Retries are ours (do.go): resty's cannot re-open a streamed body.
		SetRetryCount(0).
		SetHeader("Accept", "application/json").
		SetRedirectPolicy(resty.FlexibleRedirectPolicy(5))
	// resty v2 reads an io.Reader body into memory to build GetBody, which
	// would hold a whole upload in RAM. Streamed bodies therefore travel in
	// the request context and are put in place here, after resty is done
	// with the request and just before it is sent.
	rc.SetPreRequestHook(func(_ *resty.Client, req *http.Request) error {
		if b, ok := req.Context().Value(streamedBody{}).(io.ReadCloser); ok {
			req.Body, req.GetBody, req.ContentLength = b, nil, -1
		}
		return nil
	})
	if opts.UserAgent != "" {
		rc.SetHeader("User-Agent", opts.UserAgent)
	}
	if opts.Token != "" {
		rc.SetAuthToken(opts.Token)
	}
	return &Client{http: rc, site: site, opts: opts}, nil
}

// streamedBody is the context key of a request body that must be streamed.
type streamedBody struct{}

// SiteURL normalises a server address to the site URL: scheme and host
// required, no trailing slash, a trailing /api removed (the API lives there).
func SiteURL(server string) (string, error) {
	if server == "" {
		server = DefaultServer
	}
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("invalid server URL %q: want http(s)://host[:port][/path]", server)
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/api")
	u.RawPath = ""
	return strings.TrimRight(u.String(), "/"), nil
}

// Site is the site URL this client talks to.
func (c *Client) Site() string { return c.site }

// APIURL is the absolute address of an API path such as "/reports/3/pdf".
func (c *Client) APIURL(path string) string { return c.site + "/api" + path }

// PreviewURL, DownloadURL and PDFURL are the browser addresses of a report.
func (c *Client) PreviewURL(id int64) string  { return c.APIURL("/reports/" + itoa(id) + "/preview") }
func (c *Client) DownloadURL(id int64) string { return c.APIURL("/reports/" + itoa(id) + "/download") }
func (c *Client) PDFURL(id int64) string      { return c.APIURL("/reports/" + itoa(id) + "/pdf") }

// StaticURL makes a stored relative path (coverImage, filePath) fetchable.
func (c *Client) StaticURL(rel string) string {
	if rel == "" {
		return ""
	}
	return c.site + "/" + strings.TrimLeft(rel, "/")
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
