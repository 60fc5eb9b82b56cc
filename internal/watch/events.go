package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Event is one line of the watcher's log. With --json each event is one JSON
// object per line; the field names are part of the CLI's contract.
type Event struct {
	Time      time.Time `json:"time"`
	Event     string    `json:"event"`
	Path      string    `json:"path,omitempty"`
	Dir       string    `json:"dir,omitempty"`
	ReportID  int64     `json:"reportId,omitempty"`
	ProjectID int64     `json:"projectId,omitempty"`
	Replaced  int64     `json:"replaced,omitempty"`
	Bytes     int64     `json:"bytes,omitempty"`
	SHA256    string    `json:"sha256,omitempty"`
	Count     int       `json:"count,omitempty"`
	Attempt   int       `json:"attempt,omitempty"`
	RetryIn   string    `json:"retryIn,omitempty"`
	LatencyMs int64     `json:"latencyMs,omitempty"` // from the file's last change to published
	Forced    bool      `json:"forced,omitempty"`    // let go by --max-wait while still changing
	To        string    `json:"to,omitempty"`
	From      string    `json:"from,omitempty"`
	Error     string    `json:"error,omitempty"`
	Message   string    `json:"message,omitempty"`
	// DashboardURL is the published report's page in the dashboard.
	DashboardURL string `json:"dashboardUrl,omitempty"`
	// SiteURL opens a published site (or html report) on the content origin.
	SiteURL string `json:"siteUrl,omitempty"`
}

// The events the watcher emits.
const (
	evStart      = "start"       // Message: mode; Count: roots
	evWatching   = "watching"    // Dir
	evScan       = "scan"        // Count: files found to check
	evIdle       = "idle"        // nothing settling, uploading or queued
	evPublished  = "published"   // Path, ReportID, ProjectID, Bytes, SHA256, LatencyMs, DashboardURL; sites: Count (files), SiteURL
	evUnchanged  = "unchanged"   // Path: content identical to what was published
	evRenamed    = "renamed"     // Path, From, ReportID: a published file moved within the folders
	evQueued     = "queued"      // Path: held while the server is unreachable
	evRetry      = "retry"       // Path, Attempt, RetryIn, Error
	evRejected   = "rejected"    // Path, Attempt, Error: the server refused the file
	evFailed     = "failed"      // Path, Error, To: gave up after --max-attempts
	evMoved      = "moved"       // Path, To
	evDeleted    = "deleted"     // Path (--on-success delete)
	evReplaced   = "replaced"    // ReportID: the old report deleted by --replace
	evServerDown = "server_down" // Error
	evServerUp   = "server_up"
	evOverflow   = "overflow" // events were lost; a rescan follows
	evWarning    = "warning"  // Message, Error
	evError      = "error"    // Message, Error
	evResumed    = "resumed"  // Count: files an earlier run published; Message: the rest of the state
	evSkipped    = "skipped"  // -v: Path, Message: why the file is not published
	evWaiting    = "waiting"  // -v: Path, Message: why the file is not sent yet
	evStopping   = "stopping"
	evStopped    = "stopped"
)

// eventLog writes events as text or JSON lines. Workers log concurrently.
type eventLog struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
	now  func() time.Time
}

func (l *eventLog) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	var line []byte
	if l.json {
		line, _ = json.Marshal(e)
	} else {
		line = []byte(textLine(e))
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(line)
}

// textTime is the text lines' timestamp: date, time to the millisecond and
// UTC offset (RFC 3339), so a log kept in a file or shipped elsewhere
// says when, not only at what time of some day.
const textTime = "2006-01-02T15:04:05.000Z07:00"

// textLine is the human form: time, event, then the fields that are set.
func textLine(e Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-10s", e.Time.Format(textTime), e.Event)
	add := func(k string, v any) { fmt.Fprintf(&b, " %s=%v", k, v) }
	if e.Path != "" {
		b.WriteString(" " + e.Path)
	}
	if e.Dir != "" {
		b.WriteString(" " + e.Dir)
	}
	if e.ReportID != 0 {
		add("report", e.ReportID)
	}
	if e.ProjectID != 0 {
		add("project", e.ProjectID)
	}
	if e.Replaced != 0 {
		add("replaced", e.Replaced)
	}
	if e.Bytes != 0 {
		add("bytes", e.Bytes)
	}
	if e.Count != 0 {
		add("count", e.Count)
	}
	if e.Attempt != 0 {
		add("attempt", e.Attempt)
	}
	if e.RetryIn != "" {
		add("retry_in", e.RetryIn)
	}
	if e.LatencyMs != 0 {
		add("latency_ms", e.LatencyMs)
	}
	if e.Forced {
		add("forced", true)
	}
	if e.To != "" {
		add("to", e.To)
	}
	if e.From != "" {
		add("from", e.From)
	}
	if e.Message != "" {
		b.WriteString(" " + e.Message)
	}
	if e.Error != "" {
		add("error", fmt.Sprintf("%q", e.Error))
	}
	if e.DashboardURL != "" {
		add("open", e.DashboardURL)
	}
	if e.SiteURL != "" {
		add("site", e.SiteURL)
	}
	return strings.TrimRight(b.String(), " ")
}
