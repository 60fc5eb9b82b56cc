package boltstore

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Rows stay JSON on disk (rows.go), but encoding/json's reflection was
// most of the cost of listing: about 1.5 µs a row, 150 ms for 100,000
// reports. These decoders read the rows json.Marshal writes (the known
// keys, integers, strings without escapes) directly, and hand anything
// else — escapes, unknown or differently-cased keys, malformed input —
// to encoding/json, so every row decodes exactly as before.

func unmarshalProjectRow(b []byte, row *projectRow) error {
	if scanProjectRow(b, row) {
		return nil
	}
	return slowProjectRow(b, row)
}

func unmarshalReportRow(b []byte, row *reportRow) error {
	if scanReportRow(b, row) {
		return nil
	}
	return slowReportRow(b, row)
}

// The slow paths decode into their own variable so that the caller's row
// does not escape to the heap on the fast path.
func slowProjectRow(b []byte, row *projectRow) error {
	var r projectRow
	err := json.Unmarshal(b, &r)
	*row = r
	return err
}

func slowReportRow(b []byte, row *reportRow) error {
	var r reportRow
	err := json.Unmarshal(b, &r)
	*row = r
	return err
}

func scanProjectRow(b []byte, row *projectRow) bool {
	s := rowScanner{b: b}
	defer s.finish()
	return s.object(func(key byte) bool {
		switch key {
		case 'n':
			return s.str(&row.Name)
		case 'd':
			return s.optStr(&row.Description)
		case 'c':
			return s.int(&row.Created)
		case 'v':
			return s.optStr(&row.Cover)
		case 'k':
			return s.int(&row.Count)
		case 'r':
			return s.optInt(&row.KeepLast)
		case 'a':
			return s.optInt(&row.MaxAgeDays)
		case 'w':
			return s.optBool(&row.KeepNewest)
		case 's':
			return s.str(&row.Slug)
		}
		return false
	})
}

func scanReportRow(b []byte, row *reportRow) bool {
	s := rowScanner{b: b}
	defer s.finish()
	return s.object(func(key byte) bool {
		switch key {
		case 'p':
			return s.int(&row.Project)
		case 'n':
			return s.str(&row.Name)
		case 't':
			return s.str(&row.Type)
		case 'f':
			return s.str(&row.Path)
		case 'u':
			return s.int(&row.Uploaded)
		case 's':
			return s.int(&row.Size)
		case 'h':
			return s.str(&row.SHA256)
		case 'm':
			return s.str(&row.Label)
		case 'b':
			return s.str(&row.Branch)
		case 'c':
			return s.str(&row.Commit)
		case 'l':
			return s.str(&row.BuildURL)
		case 'i':
			return s.str(&row.BuildID)
		case 'g':
			return s.str(&row.Generator)
		case 'y':
			return s.optInt(&row.Lines)
		case 'o':
			return s.optInt(&row.Passed)
		case 'x':
			return s.optInt(&row.Failed)
		case 'z':
			return s.optInt(&row.Skipped)
		case 'r':
			return s.optInt(&row.Flaky)
		case 'k':
			return s.str(&row.Kind)
		case 'e':
			return s.str(&row.Entry)
		case 'w':
			return s.int(&row.Files)
		case 'v':
			return s.int(&row.Bytes)
		}
		return false
	})
}

// rowScanner reads one flat JSON object whose keys are single ASCII
// letters. Every method returns false as soon as the input is anything
// it does not fully understand.
//
// Strings are not copied one by one: finish makes one string of the row
// and points every field into it, one allocation a row instead of four.
type rowScanner struct {
	b       []byte
	i       int
	pending [16]pendingStr
	np      int
}

type pendingStr struct {
	dst        *string
	start, end int
}

func (s *rowScanner) finish() {
	if s.np == 0 {
		return
	}
	whole := string(s.b)
	for _, p := range s.pending[:s.np] {
		*p.dst = whole[p.start:p.end]
	}
}

func (s *rowScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *rowScanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads {"k":value,...} and nothing after it but white space.
func (s *rowScanner) object(field func(key byte) bool) bool {
	if !s.byte('{') {
		return false
	}
	if !s.byte('}') {
		for {
			s.space()
			if s.i+4 > len(s.b) || s.b[s.i] != '"' || s.b[s.i+2] != '"' {
				return false
			}
			key := s.b[s.i+1]
			s.i += 3
			if !s.byte(':') || !field(key) {
				return false
			}
			if s.byte('}') {
				break
			}
			if !s.byte(',') {
				return false
			}
		}
	}
	s.space()
	return s.i == len(s.b)
}

// raw reads a string without escapes or control bytes, in valid UTF-8.
func (s *rowScanner) raw() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for ; s.i < len(s.b); s.i++ {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, ascii || utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// str sets *dst when the row is finished; a repeated key points the
// same slot at the later value, as encoding/json keeps the last one.
func (s *rowScanner) str(dst *string) bool {
	v, ok := s.raw()
	if !ok {
		return false
	}
	end := s.i - 1
	p := pendingStr{dst, end - len(v), end}
	for i := range s.pending[:s.np] {
		if s.pending[i].dst == dst {
			s.pending[i] = p
			return true
		}
	}
	if s.np == len(s.pending) {
		return false
	}
	s.pending[s.np] = p
	s.np++
	return true
}

func (s *rowScanner) optStr(dst **string) bool {
	s.space()
	if s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		s.drop(dst)
		*dst = nil
		return true
	}
	v := new(string)
	if !s.str(v) {
		return false
	}
	s.drop(dst)
	*dst = v
	return true
}

// drop forgets an earlier value of an optional field that was repeated.
func (s *rowScanner) drop(dst **string) {
	if *dst == nil {
		return
	}
	for i := range s.pending[:s.np] {
		if s.pending[i].dst == *dst {
			s.np--
			s.pending[i] = s.pending[s.np]
			return
		}
	}
}

// int reads an integer as JSON writes it: no leading zeros, no fraction
// or exponent (those go to encoding/json, which decides).
func (s *rowScanner) int(dst *int64) bool {
	s.space()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	n := s.i - digits
	if n == 0 || (n > 1 && s.b[digits] == '0') {
		return false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return false
	}
	v, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	if err != nil {
		return false
	}
	*dst = v
	return true
}

// optInt reads an integer or null.
func (s *rowScanner) optInt(dst **int64) bool {
	if s.null() {
		*dst = nil
		return true
	}
	var v int64
	if !s.int(&v) {
		return false
	}
	*dst = &v
	return true
}

// optBool reads true, false or null.
func (s *rowScanner) optBool(dst **bool) bool {
	if s.null() {
		*dst = nil
		return true
	}
	for _, lit := range []string{"true", "false"} {
		if s.i+len(lit) <= len(s.b) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			v := lit == "true"
			*dst = &v
			return true
		}
	}
	return false
}

// null reads a null, if that is what comes next.
func (s *rowScanner) null() bool {
	s.space()
	if s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}
