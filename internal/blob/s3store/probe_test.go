package s3store_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/testserver"
)

// probe runs Probe on cfg and returns its *Problem (nil when it passed).
func probe(t *testing.T, cfg s3store.Config) *s3store.Problem {
	t.Helper()
	st, err := s3store.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = st.Probe(ctx)
	if err == nil {
		return nil
	}
	var p *s3store.Problem
	if !errors.As(err, &p) {
		t.Fatalf("Probe: %v is no *Problem", err)
	}
	return p
}

// TestProbeNamesMisconfigurations: on a real S3 server (versitygw) a wrong
// access key, a wrong secret and a missing bucket are each named for what
// they are, with the setting to fix; a server that is down is unreachable.
func TestProbeNamesMisconfigurations(t *testing.T) {
	good := testserver.Bucket(t)
	if p := probe(t, good); p != nil {
		t.Fatalf("good config: %v", p)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*s3store.Config)
		code  string
		wants []string
	}{
		// versitygw's code for an unknown key; AWS and MinIO say InvalidAccessKeyId.
		{"wrong access key", func(c *s3store.Config) { c.AccessKey = "nobody" }, "XAdminUserNotFound", []string{"does not know s3.access_key \"nobody\"", "AWS_ACCESS_KEY_ID"}},
		{"wrong secret", func(c *s3store.Config) { c.SecretKey = "not-the-secret" }, "SignatureDoesNotMatch", []string{"s3.secret_key", "is not the secret of s3.access_key"}},
		{"missing bucket", func(c *s3store.Config) { c.Bucket = "no-such-bucket" }, "NoSuchBucket", []string{`s3.bucket "no-such-bucket" does not exist`, "create it"}},
	} {
		cfg := good
		tc.edit(&cfg)
		p := probe(t, cfg)
		if p == nil {
			t.Errorf("%s: probe passed", tc.name)
			continue
		}
		if p.Code != tc.code || p.Unreachable {
			t.Errorf("%s: code %q unreachable %v, want %s: %v", tc.name, p.Code, p.Unreachable, tc.code, p)
		}
		for _, w := range tc.wants {
			if !strings.Contains(p.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, p.Error(), w)
			}
		}
		if strings.Contains(p.Error(), cfg.SecretKey) {
			t.Errorf("%s: the secret is in %q", tc.name, p.Error())
		}
	}

	// Nothing listens: unreachable, which start-up waits out.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := good
	cfg.Endpoint = ln.Addr().String()
	ln.Close()
	if p := probe(t, cfg); p == nil || !p.Unreachable || !strings.Contains(p.Error(), "cannot reach") {
		t.Errorf("closed port: %v", p)
	}
}

// s3Error serves one S3 error document (as AWS words it) for every request,
// with the server's clock at now+offset in its Date header.
func s3Error(t *testing.T, status int, xml string, offset time.Duration) s3store.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(offset).UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			w.Write([]byte(xml))
		}
	}))
	t.Cleanup(srv.Close)
	return s3store.Config{Endpoint: strings.TrimPrefix(srv.URL, "http://"), Bucket: "reports", Region: "us-east-1",
		AccessKey: "AKIAEXAMPLE", SecretKey: "secret"}
}

// TestProbeNamesClockSkew: versitygw cannot be made to see another clock
// (the signer uses this machine's), so S3's own error documents are served
// here: AWS's RequestTimeTooSkewed, and an AccessDenied from a server whose
// Date header is an hour away, which the second request tells apart from a
// key that may not list the bucket.
func TestProbeNamesClockSkew(t *testing.T) {
	const skewed = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>RequestTimeTooSkewed</Code><Message>The difference between the request time and the current time is too large.</Message><RequestTime>20260302T073000Z</RequestTime><ServerTime>2026-03-02T08:30:00Z</ServerTime><MaxAllowedSkewMilliseconds>900000</MaxAllowedSkewMilliseconds><RequestId>4442587FB7D0A2F9</RequestId><HostId>aHostId=</HostId></Error>`
	const denied = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>4442587FB7D0A2F9</RequestId><HostId>aHostId=</HostId></Error>`

	p := probe(t, s3Error(t, http.StatusForbidden, skewed, time.Hour))
	if p == nil || p.Code != "RequestTimeTooSkewed" || !strings.Contains(p.Error(), "clock") || !strings.Contains(p.Error(), "1h0m0s off") {
		t.Errorf("RequestTimeTooSkewed: %v", p)
	}
	p = probe(t, s3Error(t, http.StatusForbidden, denied, -time.Hour))
	if p == nil || p.Code != "AccessDenied" || !strings.Contains(p.Error(), "clock is 1h0m0s off") || !strings.Contains(p.Error(), "NTP") {
		t.Errorf("AccessDenied with a skewed server clock: %v", p)
	}
	p = probe(t, s3Error(t, http.StatusForbidden, denied, 0))
	if p == nil || p.Code != "AccessDenied" || strings.Contains(p.Error(), "clock") || !strings.Contains(p.Error(), "may not list") || !strings.Contains(p.Error(), "s3:ListBucket") {
		t.Errorf("AccessDenied with the clocks agreeing: %v", p)
	}
	p = probe(t, s3Error(t, http.StatusForbidden, `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our records.</Message><AWSAccessKeyId>AKIAEXAMPLE</AWSAccessKeyId><RequestId>4442587FB7D0A2F9</RequestId></Error>`, 0))
	if p == nil || p.Code != "InvalidAccessKeyId" || !strings.Contains(p.Error(), `does not know s3.access_key "AKIAEXAMPLE"`) {
		t.Errorf("InvalidAccessKeyId: %v", p)
	}
	p = probe(t, s3Error(t, http.StatusServiceUnavailable, `<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`, 0))
	if p == nil || !p.Unreachable {
		t.Errorf("503 SlowDown: %v", p)
	}
}
