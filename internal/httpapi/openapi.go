package httpapi

import (
	_ "embed"
	"net/http"
	"strconv"
)

// OpenAPI is the API's contract as an OpenAPI 3.1 document; the tests
// validate real responses against it so the two cannot drift.
//
//go:embed openapi.json
var OpenAPI []byte

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(OpenAPI)))
	w.Write(OpenAPI)
	return nil
}
