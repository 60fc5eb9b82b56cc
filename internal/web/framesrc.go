package web

import (
	"fmt"
	"net/url"
	"strings"
)

// idMark stands for {id} while a template is parsed: a valid host label.
const idMark = "reportd-id-mark"

// FrameSource turns a content-origin URL template (config content.url,
// "{id}" where the report id goes) into the CSP source expression that
// lets the dashboard frame every report's origin:
//
//	http://{id}.localhost:8081               http://*.localhost:8081
//	https://{id}.reports-content.example.com https://*.reports-content.example.com
//	http://reports.example.com:8082/r/{id}/  http://reports.example.com:8082
//
// {id} must be (part of) the leftmost label of the host, the only place a
// CSP wildcard may stand, or not in the host at all (the shared-origin
// fallback: one origin for every report). Paths are left out: after the
// first redirect CSP matches origins only, and a site's pages are all on
// its origin anyway.
func FrameSource(template string) (string, error) {
	u, err := url.Parse(strings.ReplaceAll(template, "{id}", idMark))
	if err != nil {
		return "", fmt.Errorf("content URL %q: %v", template, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("content URL %q: the scheme must be http or https", template)
	}
	host := u.Hostname()
	if host == "" || u.User != nil {
		return "", fmt.Errorf("content URL %q: no host, or a user name in it", template)
	}
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if !strings.Contains(l, idMark) {
			continue
		}
		if i != 0 || len(labels) < 2 {
			return "", fmt.Errorf("content URL %q: {id} must be in the leftmost label of a host with a domain after it (e.g. https://{id}.reports.example.com), where a browser's frame-src wildcard can match it", template)
		}
		labels[0] = "*"
	}
	host = strings.Join(labels, ".")
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" {
		host += ":" + p
	}
	return u.Scheme + "://" + host, nil
}
