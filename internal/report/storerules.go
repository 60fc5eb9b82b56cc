package report

import (
	"errors"
	"fmt"
)

// The rules below are every MetaStore's (bbolt, PostgreSQL): written once
// here so that the stores cannot drift apart.

// Apply applies an update to r: nil fields keep their value; in the build
// metadata "" clears a field, and a cleared name is derived from the file
// name again.
func (c ReportChange) Apply(r *Report) {
	if c.FileName != nil {
		r.FileName = *c.FileName
	}
	if c.FileType != nil {
		r.FileType = *c.FileType
	}
	if c.FilePath != nil {
		r.FilePath = *c.FilePath
	}
	set := func(dst **string, v *string) {
		if v != nil {
			*dst = nil
			if *v != "" {
				s := *v
				*dst = &s
			}
		}
	}
	if c.Meta.Name != nil {
		r.Name = *c.Meta.Name
	}
	if r.Name == "" {
		r.Name = NameFromFile(r.FileName)
	}
	set(&r.Branch, c.Meta.Branch)
	set(&r.Commit, c.Meta.Commit)
	set(&r.BuildURL, c.Meta.BuildURL)
	set(&r.BuildID, c.Meta.BuildID)
}

// NotFound is the error of a Latest that found nothing: what it looked for.
func (q LatestQuery) NotFound() error {
	what := fmt.Sprintf("no report in project %d", q.Project)
	if q.Name != nil {
		what += fmt.Sprintf(" named %q", *q.Name)
		if q.Type != nil {
			what += fmt.Sprintf(" of type %s", *q.Type)
		}
	}
	switch {
	case q.Branch != nil && *q.Branch == "":
		what += " without a branch"
	case q.Branch != nil:
		what += fmt.Sprintf(" on branch %q", *q.Branch)
	}
	return Errorf(NotFound, "%s", what)
}

// StoreError is err as a store answers it: an *Error as it is, anything
// else (I/O, the database) a StorageError.
func StoreError(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return Wrap(Storage, err, "metadata store failed")
}

// NoSuch is the NotFoundError of a missing row: "report 7 not found".
func NoSuch(what string, id int64) error {
	return Errorf(NotFound, "%s %d not found", what, id)
}
