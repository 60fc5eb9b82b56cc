package report

import (
	"path/filepath"
	"strings"
)

// FileType is the kind of a stored report. The set is closed (api-spec §2).
type FileType string

const (
	HTML FileType = "html"
	MD   FileType = "md"
	PDF  FileType = "pdf"
	PPT  FileType = "ppt"
	PPTX FileType = "pptx"
)

// FileTypes lists every supported type in a stable order.
var FileTypes = []FileType{HTML, MD, PDF, PPT, PPTX}

// ParseFileType accepts the spec's names, ignoring case and surrounding
// space ("PDF" is pdf); the stored value is always the lower-case name.
func ParseFileType(s string) (FileType, error) {
	norm := strings.ToLower(strings.TrimSpace(s))
	for _, t := range FileTypes {
		if norm == string(t) {
			return t, nil
		}
	}
	return "", Errorf(Validation, "fileType must be one of html, md, pdf, ppt, pptx (got %q)", s)
}

// Ext is the extension, with its dot, that stored files of this type carry.
func (t FileType) Ext() string { return "." + string(t) }

// ContentType is the preview Content-Type from DESIGN.md.
func (t FileType) ContentType() string {
	switch t {
	case HTML:
		return "text/html; charset=utf-8"
	case MD:
		return "text/markdown; charset=utf-8"
	case PDF:
		return "application/pdf"
	case PPT:
		return "application/vnd.ms-powerpoint"
	case PPTX:
		return "application/vnd.openxmlformats-officedocument.presentationml.presentation"
	}
	return "application/octet-stream"
}

// IsText reports whether the detail response carries the file's text.
func (t FileType) IsText() bool { return t == HTML || t == MD }

// TypeOfName infers the type from a file name's extension, case-insensitively.
func TypeOfName(name string) (FileType, bool) {
	ext := strings.ToLower(filepath.Ext(name))
	if ext == "" {
		return "", false
	}
	t, err := ParseFileType(ext[1:])
	return t, err == nil
}
