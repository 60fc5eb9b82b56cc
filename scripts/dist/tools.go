//go:build tools

// The tools dist.sh builds from this module, pinned by go.mod.
package main

import _ "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"
