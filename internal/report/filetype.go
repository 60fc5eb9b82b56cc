package report

import (
	"path/filepath"
	"strings"
)

// FileType is the kind of a stored report. What each type is (extension,
// MIME type, content rule, engine, print options, label) is its row in the
// type table (types.go); every layer reads it from there.
type FileType string

const (
	HTML FileType = "html"
	MD   FileType = "md"
	PDF  FileType = "pdf"
	PPT  FileType = "ppt"
	PPTX FileType = "pptx"
)

// FileTypes lists the public types (api-spec §2, the OpenAPI FileType
// enum) in a stable order: the seed table's. A type registered by a test
// (RegisterType) is not among them.
var FileTypes = []FileType{HTML, MD, PDF, PPT, PPTX}

// ParseFileType accepts the table's names, ignoring case and surrounding
// space ("PDF" is pdf); the stored value is always the lower-case name.
func ParseFileType(s string) (FileType, error) {
	norm := strings.ToLower(strings.TrimSpace(s))
	if ti, ok := Lookup(FileType(norm)); ok {
		return ti.Type, nil
	}
	return "", Errorf(Validation, "fileType must be one of %s (got %q)", TypeNames(", ", ", "), s)
}

// Ext is the extension, with its dot, that stored files of this type carry.
func (t FileType) Ext() string {
	if ti, ok := Lookup(t); ok {
		return ti.Exts[0]
	}
	return "." + string(t)
}

// ContentType is the preview Content-Type from DESIGN.md.
func (t FileType) ContentType() string {
	if ti, ok := Lookup(t); ok {
		return ti.MIME
	}
	return "application/octet-stream"
}

// IsText reports whether the detail response carries the file's text.
func (t FileType) IsText() bool {
	ti, ok := Lookup(t)
	return ok && ti.Text
}

// TypeOfName infers the type from a file name's extension, case-insensitively.
func TypeOfName(name string) (FileType, bool) {
	ext := strings.ToLower(filepath.Ext(name))
	if ext == "" {
		return "", false
	}
	for _, ti := range Types() {
		for _, e := range ti.Exts {
			if e == ext {
				return ti.Type, true
			}
		}
	}
	return "", false
}
