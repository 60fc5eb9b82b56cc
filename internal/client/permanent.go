package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
)

// permanentFailure says why a transport error will not go away by waiting,
// or "" when a retry may help. A host name that does not resolve is a typo
// or a missing DNS entry, and a certificate that does not verify is a wrong
// name, an expired certificate or a missing CA: repeating the request only
// delays the message the person needs (issue 22: a typo retried 9 times
// over 30 s). A server that refuses, resets or times out is retried as
// before, since it may be restarting.
func permanentFailure(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound { // a resolver timeout or SERVFAIL may pass: retried
		return fmt.Sprintf("cannot resolve host name %q: %s; check the server address", dnsErr.Name, dnsErr.Err)
	}
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &hostname):
		return fmt.Sprintf("TLS certificate verification failed: %v", hostname)
	case errors.As(err, &unknown):
		return fmt.Sprintf("TLS certificate verification failed: %v (install the issuing CA on this machine)", unknown)
	case errors.As(err, &invalid):
		return fmt.Sprintf("TLS certificate verification failed: %v", invalid)
	case errors.As(err, &verify):
		return fmt.Sprintf("TLS certificate verification failed: %v", verify.Err)
	}
	return ""
}

// dialReserved wraps dial so that names under the reserved top-level domain
// "invalid" fail at once, as RFC 6761 §6.4 asks of name resolution
// libraries, without asking a DNS server that may be slow or absent.
func dialReserved(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err == nil && isReservedInvalid(host) {
			return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{
				Err: "no such host", Name: host, IsNotFound: true,
			}}
		}
		return dial(ctx, network, addr)
	}
}

func isReservedInvalid(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "invalid" || strings.HasSuffix(h, ".invalid")
}
