package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// maxPolicyBytes bounds a retention policy body; it has three fields.
const maxPolicyBytes = 64 << 10

func (s *Server) getRetention(w http.ResponseWriter, r *http.Request) error {
	return getByID(s, Service.GetRetention)(w, r)
}

// putRetention replaces a project's policy: a field that is null or
// missing inherits the server default; {} removes the policy.
func (s *Server) putRetention(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	pol, given, err := readPolicy(r)
	if err != nil {
		return err
	}
	if !given {
		return report.Errorf(report.Validation, "request body must be a JSON object: keepLast, maxAgeDays, keepNewestPerBranch ({} removes the policy)")
	}
	v, err := s.svc.SetRetention(r.Context(), id, pol)
	if err == nil {
		writeJSON(w, http.StatusOK, v)
	}
	return err
}

// pruneProject is POST /api/projects/{id}/prune; pruneAll is POST
// /api/prune. ?dryRun=true plans without deleting; an optional body is a
// policy whose set fields override the project's for this prune.
func (s *Server) pruneProject(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	return s.prune(w, r, &id)
}

func (s *Server) pruneAll(w http.ResponseWriter, r *http.Request) error { return s.prune(w, r, nil) }

func (s *Server) prune(w http.ResponseWriter, r *http.Request, project *int64) error {
	dry, err := queryBool(r, "dryRun")
	if err != nil {
		return err
	}
	pol, _, err := readPolicy(r)
	if err != nil {
		return err
	}
	res, err := s.svc.Prune(r.Context(), service.PruneRequest{ProjectID: project, Override: pol, DryRun: dry, Trigger: "api"})
	if err == nil {
		writeJSON(w, http.StatusOK, res)
	}
	return err
}

// queryBool reads an optional true/false query parameter.
func queryBool(r *http.Request, name string) (bool, error) {
	vs, ok := r.URL.Query()[name]
	if !ok {
		return false, nil
	}
	if len(vs) == 1 {
		switch vs[0] {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
	}
	return false, report.Errorf(report.Validation, "%s must be true or false, given once", name)
}

// readPolicy reads an optional retention policy body; given is false for
// an empty body. Unknown fields are refused, so that a misspelt one does
// not silently leave the policy unset.
func readPolicy(r *http.Request) (pol report.Retention, given bool, err error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxPolicyBytes))
	if err != nil {
		return pol, false, report.Errorf(report.Validation, "the policy body is larger than %d bytes or unreadable", maxPolicyBytes)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return pol, false, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		return pol, false, report.Errorf(report.Validation, "the policy must be a JSON object: keepLast, maxAgeDays, keepNewestPerBranch")
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := fields[k]
		if string(raw) == "null" {
			continue
		}
		switch k {
		case "keepLast":
			pol.KeepLast, err = policyInt(k, raw)
		case "maxAgeDays":
			pol.MaxAgeDays, err = policyInt(k, raw)
		case "keepNewestPerBranch":
			var v bool
			if json.Unmarshal(raw, &v) != nil {
				return pol, true, report.Errorf(report.Validation, "keepNewestPerBranch must be true, false or null")
			}
			pol.KeepNewestPerBranch = &v
		default:
			return pol, true, report.Errorf(report.Validation, "unknown policy field %s (known: keepLast, maxAgeDays, keepNewestPerBranch)", strconv.Quote(k))
		}
		if err != nil {
			return pol, true, err
		}
	}
	return pol, true, pol.Check()
}

func policyInt(field string, raw json.RawMessage) (*int, error) {
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, report.Errorf(report.Validation, "%s must be a whole number >= 0 or null", field)
	}
	return &v, nil
}
