package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/reportd/reportd/internal/report"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	bp := jsonBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledJSON {
			jsonBufs.Put(bp)
		}
	}()
	b, ok := appendAPIJSON((*bp)[:0], v)
	if !ok {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // fileContent is HTML; keep it readable
		err := enc.Encode(v)
		b = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if err != nil {
			status = http.StatusInternalServerError
			b = []byte(`{"error":"InternalError: cannot encode the response","type":"InternalError"}`)
		}
	}
	b = append(b, '\n')
	*bp = b
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// decodeJSON reads one JSON object of at most limit bytes into v and turns
// every way that can fail into a ValidationError that says what was wrong.
func decodeJSON(r *http.Request, limit int64, v any) error {
	body := bufio.NewReader(http.MaxBytesReader(nil, r.Body, limit))
	first := firstByte(body)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		return jsonError(err, limit)
	}
	if first != '{' {
		// Only null decodes into a struct without error; it is no more an
		// object than [] is.
		return report.Errorf(report.Validation, "request body must be a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return report.Errorf(report.Validation, "request body must hold a single JSON object")
	}
	return nil
}

// firstByte peeks at the first byte that is not JSON white space.
func firstByte(br *bufio.Reader) byte {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.ReadByte()
		default:
			return b[0]
		}
	}
}

func jsonError(err error, limit int64) error {
	var (
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		big  *http.MaxBytesError
		rerr *report.Error
	)
	switch {
	case errors.As(err, &rerr):
		return err
	case errors.Is(err, io.EOF):
		return report.Errorf(report.Validation, "request body is empty; a JSON object is required")
	case errors.As(err, &big):
		return report.Errorf(report.PayloadTooLarge, "request body exceeds %d bytes", limit)
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return report.Errorf(report.Validation, "request body is not valid JSON")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return report.Errorf(report.Validation, "request body must be a JSON object")
		}
		return report.Errorf(report.Validation, "field %q must be a %s", typ.Field, jsonKind(typ.Type.Kind().String()))
	}
	return report.Errorf(report.Validation, "request body is not valid JSON: %s", fmt.Sprint(err))
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string", "ptr":
		return "string"
	case "int64", "int":
		return "integer"
	}
	return goKind
}
