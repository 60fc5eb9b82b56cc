package site

import (
	"bytes"
	"fmt"
	"html"
	"net/url"
	"strings"
)

// Listing renders a plain HTML page linking every file of m, for a site
// without an entry page. Names are escaped for both the link and the text;
// links are relative, so the page works at the site's root.
func Listing(m Manifest) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Files</title></head>\n<body>\n<h1>Files</h1>\n<ul>\n")
	for _, f := range m.Files {
		href := EscapePath(f.Path)
		if first, _, _ := strings.Cut(href, "/"); strings.HasPrefix(first, ".") || strings.Contains(first, ":") {
			href = "./" + href
		}
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a> (%d bytes)</li>\n", html.EscapeString(href), html.EscapeString(f.Path), f.Size)
	}
	b.WriteString("</ul>\n</body></html>\n")
	return b.Bytes()
}

// EscapePath escapes each segment of a slash path (a site file name) for
// a URL path, keeping the slashes.
func EscapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
