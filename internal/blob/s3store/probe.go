package s3store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/minio/minio-go/v7"
)

// Problem is a failed Probe named for an operator: what S3 said, what it
// means here and how to fix it.
type Problem struct {
	// Code is S3's error code (InvalidAccessKeyId, NoSuchBucket, ...);
	// empty when the server did not answer.
	Code string
	// Unreachable: no answer, or a 5xx; it may pass on its own (start-up
	// waits for it), where every other problem needs the operator.
	Unreachable bool
	msg         string
	Err         error
}

func (p *Problem) Error() string { return p.msg }
func (p *Problem) Unwrap() error { return p.Err }

// maxSkew is how far apart S3 lets the signer's clock and its own be
// (AWS and most servers: 15 minutes).
const maxSkew = 15 * time.Minute

// Probe lists at most one key of the bucket, once (no retries): the check
// of start-up and of /readyz. A HEAD of the bucket would not do: its
// answer has no body, so a wrong key, a wrong secret and a missing bucket
// all look alike. A failure is a *Problem.
func (s *Store) Probe(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for oi := range s.probe.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, MaxKeys: 1}) {
		if oi.Err != nil {
			return s.diagnose(ctx, oi.Err, s.serverTime)
		}
		break
	}
	return nil
}

// diagnose names err. Where S3's code may hide a clock that is off (some
// servers answer AccessDenied or SignatureDoesNotMatch to a request signed
// too far from their time), a second, unsigned request reads the server's
// clock from its Date header.
func (s *Store) diagnose(ctx context.Context, err error, serverTime func(context.Context) (time.Time, error)) *Problem {
	r := minio.ToErrorResponse(err)
	p := &Problem{Code: r.Code, Err: err}
	at := fmt.Sprintf("%s at s3.endpoint %s", quoteBucket(s.bucket), s.endpoint)
	if r.StatusCode == 0 || Unreachable(err) {
		p.Unreachable = true
		p.msg = fmt.Sprintf("cannot reach %s: %v (check s3.endpoint, s3.tls and that the S3 server runs)", at, err)
		if r.StatusCode != 0 {
			p.msg = fmt.Sprintf("the S3 server is failing for %s: %s (%s, HTTP %d); it may pass", at, r.Message, r.Code, r.StatusCode)
		}
		return p
	}
	skew := func() time.Duration {
		if serverTime == nil {
			return 0
		}
		t, err := serverTime(ctx)
		if err != nil || t.IsZero() {
			return 0
		}
		return time.Since(t).Round(time.Second)
	}
	switch r.Code {
	case "RequestTimeTooSkewed":
		p.msg = fmt.Sprintf("the S3 server refuses this machine's clock (RequestTimeTooSkewed%s) for %s: set the clock right (NTP: timedatectl set-ntp true); requests must be signed within %v of the server's time",
			skewNote(skew()), at, maxSkew)
	case "InvalidAccessKeyId", "XAdminUserNotFound": // the second is versitygw's, with a 404 that a HEAD would read as "no such bucket"
		p.msg = fmt.Sprintf("the S3 server does not know s3.access_key %q ("+r.Code+") for %s: check s3.access_key (env REPORTD_S3_ACCESS_KEY or AWS_ACCESS_KEY_ID)", s.access, at)
	case "SignatureDoesNotMatch", "AccessDenied":
		if d := skew(); d > maxSkew || d < -maxSkew {
			p.msg = fmt.Sprintf("this machine's clock is %v off the S3 server's (the server answered %s) for %s: set the clock right (NTP: timedatectl set-ntp true); requests must be signed within %v of the server's time",
				absDur(d), r.Code, at, maxSkew)
			break
		}
		if r.Code == "SignatureDoesNotMatch" {
			p.msg = fmt.Sprintf("the S3 server rejects the request signature (SignatureDoesNotMatch) for %s: s3.secret_key (or s3.secret_key_file, AWS_SECRET_ACCESS_KEY) is not the secret of s3.access_key %q", at, s.access)
			break
		}
		p.msg = fmt.Sprintf("s3.access_key %q may not list %s (AccessDenied): grant it s3:ListBucket on the bucket and s3:GetObject, s3:PutObject, s3:DeleteObject, s3:AbortMultipartUpload on its objects (below s3.prefix), or name the right s3.bucket", s.access, at)
	case "NoSuchBucket":
		p.msg = fmt.Sprintf("s3.bucket %q does not exist at s3.endpoint %s (NoSuchBucket; reportd does not create it): create it, or fix s3.bucket", s.bucket, s.endpoint)
	case "AuthorizationHeaderMalformed", "IllegalLocationConstraintException", "PermanentRedirect":
		where := ""
		if r.Region != "" {
			where = fmt.Sprintf(" (the server says %q)", r.Region)
		}
		p.msg = fmt.Sprintf("the bucket is in another region than s3.region%s (%s) for %s: set s3.region", where, r.Code, at)
	default:
		p.msg = fmt.Sprintf("the S3 server refused to list %s: %s (%s, HTTP %d)", at, r.Message, r.Code, r.StatusCode)
	}
	return p
}

// serverTime reads the S3 server's clock from the Date header of an
// unsigned request (any answer carries one, an error too).
func (s *Store) serverTime(ctx context.Context) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, s.probe.EndpointURL().String()+"/", nil)
	if err != nil {
		return time.Time{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	resp.Body.Close()
	d := resp.Header.Get("Date")
	if d == "" {
		return time.Time{}, errors.New("no Date header")
	}
	return http.ParseTime(d)
}

func skewNote(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return fmt.Sprintf("; this machine's clock is %v off the server's", absDur(d))
}

// absDur is the size of a clock difference as a message shows it: a Date
// header has whole seconds, so beyond a minute it is rounded to minutes.
func absDur(d time.Duration) time.Duration {
	if d < 0 {
		d = -d
	}
	if d >= time.Minute {
		d = d.Round(time.Minute)
	}
	return d
}

func quoteBucket(b string) string { return fmt.Sprintf("bucket %q", b) }
