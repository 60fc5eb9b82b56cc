package service

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/reportd/reportd/internal/report"
)

const (
	maxNameLen        = 255  // bytes, like most file systems
	maxProjectNameLen = 200  // characters
	maxDescriptionLen = 5000 // characters
)

// BaseName keeps the last element of a client-supplied file name, with
// either slash style, and refuses names that could not be a file's.
func BaseName(name string) (string, error) {
	name = strings.ReplaceAll(name, "\\", "/")
	name = strings.TrimSpace(path.Base(name))
	switch {
	case name == "" || name == "." || name == ".." || name == "/":
		return "", report.Errorf(report.Validation, "fileName is empty")
	case !utf8.ValidString(name):
		return "", report.Errorf(report.Validation, "fileName is not valid UTF-8")
	case len(name) > maxNameLen:
		return "", report.Errorf(report.Validation, "fileName is longer than %d bytes", maxNameLen)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", report.Errorf(report.Validation, "fileName contains control characters")
		}
	}
	if err := checkVisible("fileName", name); err != nil {
		return "", err
	}
	return name, nil
}

// checkNameType insists that the extension agrees with the declared type.
func checkNameType(name string, t report.FileType) error {
	got, ok := report.TypeOfName(name)
	if !ok {
		return report.Errorf(report.Validation, "fileName %q must end in %s", name, report.TypeExts(", ", " or "))
	}
	if got != t {
		return report.Errorf(report.Validation, "fileName %q does not match fileType %q", name, t)
	}
	return nil
}

func checkProjectName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", report.Errorf(report.Validation, "name is required")
	case !utf8.ValidString(name):
		return "", report.Errorf(report.Validation, "name is not valid UTF-8")
	case utf8.RuneCountInString(name) > maxProjectNameLen:
		return "", report.Errorf(report.Validation, "name is longer than %d characters", maxProjectNameLen)
	}
	if err := checkVisible("name", name); err != nil {
		return "", err
	}
	return name, nil
}

func checkDescription(d *string) error {
	if d == nil {
		return nil
	}
	if !utf8.ValidString(*d) {
		return report.Errorf(report.Validation, "description is not valid UTF-8")
	}
	if utf8.RuneCountInString(*d) > maxDescriptionLen {
		return report.Errorf(report.Validation, "description is longer than %d characters", maxDescriptionLen)
	}
	return nil
}
