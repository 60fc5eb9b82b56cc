package httpapi

import "github.com/reportd/reportd/internal/report"

// Class sorts a finished request for alerting: whose fault an error was,
// whatever status the error mode gave it. In the spec's status mode every
// error is a 500, so the status alone cannot tell a server in trouble from
// clients sending typos; the class can.
type Class string

const (
	ClassOK          Class = "ok"
	ClassClientError Class = "client_error"
	ClassServerError Class = "server_error"
)

// serverKinds are the error types that mean the daemon (its disk, its
// engines, its code) failed a request it should have served. A
// ConversionError counts here: a file that was accepted at upload is one
// the engines are expected to convert, and the conventional status mode
// answers it 502 too (docs/operations.md).
var serverKinds = map[report.Kind]bool{
	report.Storage:     true,
	report.Internal:    true,
	report.Conversion:  true,
	report.Unavailable: true,
}

// classOf derives the class from the error type answered (empty for none)
// and, for responses no API error produced, from the status.
func classOf(k report.Kind, status int) Class {
	switch {
	case k != "" && serverKinds[k]:
		return ClassServerError
	case k != "":
		return ClassClientError
	case status >= 500:
		return ClassServerError
	case status >= 400:
		return ClassClientError
	}
	return ClassOK
}

// Request is one finished request, as an Observer hears of it.
type Request struct {
	Route     string // the mux pattern, "unmatched" for none
	Status    int
	Class     Class
	ErrorType report.Kind // empty when the request succeeded
	Bytes     int64
	Seconds   float64
}
