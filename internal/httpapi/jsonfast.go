package httpapi

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/reportd/reportd/internal/report"
)

// The API's list and detail bodies are written by hand: through
// encoding/json's reflection (and LocalTime's MarshalJSON, which it
// re-validates) they cost several microseconds an item, most of
// GET /api/projects and nearly all of GET /api/reports. The output is
// byte for byte what json.Encoder with SetEscapeHTML(false) writes;
// jsonfast_test.go holds the two side by side, including for any field
// added to the types later.

var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// itemSizeGuess sizes a list's buffer up front (a typical item is 150-200
// bytes), so a 100,000-report list is not copied through a dozen doublings.
const itemSizeGuess = 192

// maxPooledJSON keeps one huge list from pinning its buffer in the pool.
const maxPooledJSON = 1 << 20

// appendAPIJSON appends v's JSON if v is one of the API's own bodies.
func appendAPIJSON(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case report.Project:
		return appendProject(b, &v), true
	case []report.Project:
		return appendList(b, v, appendProject), true
	case report.Report:
		return appendReport(b, &v), true
	case []report.Report:
		return appendList(b, v, appendReport), true
	}
	return b, false
}

// appendList appends a JSON array of items (null for a nil slice, like encoding/json).
func appendList[T any](b []byte, items []T, item func([]byte, *T) []byte) []byte {
	if items == nil {
		return append(b, "null"...)
	}
	b = slices.Grow(b, len(items)*itemSizeGuess)
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, &items[i])
	}
	return append(b, ']')
}

func appendProject(b []byte, p *report.Project) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, p.ID, 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, p.Name)
	b = append(b, `,"slug":`...)
	b = appendJSONString(b, p.Slug)
	b = append(b, `,"description":`...)
	b = appendOptString(b, p.Description)
	b = append(b, `,"createdAt":`...)
	b = appendLocalTime(b, p.CreatedAt)
	b = append(b, `,"coverImage":`...)
	b = appendOptString(b, p.CoverImage)
	b = append(b, `,"reportCount":`...)
	b = strconv.AppendInt(b, p.ReportCount, 10)
	b = append(b, `,"todayNewReports":`...)
	b = strconv.AppendInt(b, p.TodayNewReports, 10)
	b = append(b, `,"retention":`...)
	b = appendRetention(b, p.Retention)
	return append(b, '}')
}

// appendRetention writes a project's policy, null when it has none.
func appendRetention(b []byte, r *report.Retention) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"keepLast":`...)
	b = appendOptInt(b, r.KeepLast)
	b = append(b, `,"maxAgeDays":`...)
	b = appendOptInt(b, r.MaxAgeDays)
	b = append(b, `,"keepNewestPerBranch":`...)
	switch {
	case r.KeepNewestPerBranch == nil:
		b = append(b, "null"...)
	default:
		b = strconv.AppendBool(b, *r.KeepNewestPerBranch)
	}
	return append(b, '}')
}

func appendOptInt(b []byte, v *int) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*v), 10)
}

func appendReport(b []byte, r *report.Report) []byte {
	b = appendReportHead(b, r)
	b = appendOptString(b, r.FileContent)
	return appendReportTail(b, r)
}

// appendReportHead writes a report up to `"fileContent":`, so the detail
// can stream a large text in between head and tail.
func appendReportHead(b []byte, r *report.Report) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, `,"projectId":`...)
	b = strconv.AppendInt(b, r.ProjectID, 10)
	b = append(b, `,"fileName":`...)
	b = appendJSONString(b, r.FileName)
	b = append(b, `,"fileType":`...)
	b = appendJSONString(b, string(r.FileType))
	b = append(b, `,"filePath":`...)
	b = appendJSONString(b, r.FilePath)
	b = append(b, `,"uploadTime":`...)
	b = appendLocalTime(b, r.UploadTime)
	return append(b, `,"fileContent":`...)
}

func appendReportTail(b []byte, r *report.Report) []byte {
	b = append(b, `,"name":`...)
	b = appendJSONString(b, r.Name)
	b = append(b, `,"branch":`...)
	b = appendOptString(b, r.Branch)
	b = append(b, `,"commit":`...)
	b = appendOptString(b, r.Commit)
	b = append(b, `,"buildUrl":`...)
	b = appendOptString(b, r.BuildURL)
	b = append(b, `,"buildId":`...)
	b = appendOptString(b, r.BuildID)
	if r.Generator != "" {
		b = append(b, `,"generator":`...)
		b = appendJSONString(b, r.Generator)
	}
	if r.Summary != nil {
		b = append(b, `,"summary":`...)
		b = appendSummary(b, r.Summary)
	}
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, r.Kind)
	if r.Entry != "" {
		b = append(b, `,"entry":`...)
		b = appendJSONString(b, r.Entry)
	}
	if r.Files != 0 {
		b = append(b, `,"files":`...)
		b = strconv.AppendInt(b, int64(r.Files), 10)
	}
	if r.Bytes != 0 {
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, r.Bytes, 10)
	}
	if r.SiteURL != "" {
		b = append(b, `,"siteUrl":`...)
		b = appendJSONString(b, r.SiteURL)
	}
	if r.DashboardURL != "" {
		b = append(b, `,"dashboardUrl":`...)
		b = appendJSONString(b, r.DashboardURL)
	}
	if r.FileContentOmitted {
		b = append(b, `,"fileContentOmitted":true`...)
	}
	if r.FileContentSize != 0 {
		b = append(b, `,"fileContentSize":`...)
		b = strconv.AppendInt(b, r.FileContentSize, 10)
	}
	return append(b, '}')
}

func appendSummary(b []byte, s *report.Summary) []byte {
	sep := byte('{')
	field := func(name string) {
		b = append(b, sep, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		sep = ','
	}
	if s.Lines != nil {
		f := *s.Lines
		if f != 0 && (math.Abs(f) < 1e-6 || math.Abs(f) >= 1e21) || math.IsNaN(f) || math.IsInf(f, 0) {
			// encoding/json's exponent form (or its error): let it decide.
			v, err := json.Marshal(s)
			if err != nil {
				return append(b, "null"...)
			}
			return append(b, v...)
		}
		field("lines")
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	for _, c := range []struct {
		name string
		v    *int64
	}{{"passed", s.Passed}, {"failed", s.Failed}, {"skipped", s.Skipped}, {"flaky", s.Flaky}} {
		if c.v != nil {
			field(c.name)
			b = strconv.AppendInt(b, *c.v, 10)
		}
	}
	if sep == '{' {
		b = append(b, '{')
	}
	return append(b, '}')
}

func appendLocalTime(b []byte, t report.LocalTime) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, report.LocalLayout)
	return append(b, '"')
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

const hexDigits = "0123456789abcdef"

// appendJSONString escapes exactly as encoding/json does without HTML
// escaping: quote, backslash and control bytes; invalid UTF-8 becomes
// \ufffd; U+2028 and U+2029 are escaped for JavaScript's sake.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendJSONEscaped(b, s)
	return append(b, '"')
}

// appendJSONEscaped is appendJSONString without the quotes.
func appendJSONEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
