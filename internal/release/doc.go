// Package release holds the tests of the release artifacts (issue 23):
// scripts/dist.sh builds a reportctl archive and the amd64 .deb, which are
// inspected with Debian's own tools (dpkg-deb, lintian), run from the
// extracted package, and built twice to prove them reproducible.
package release
