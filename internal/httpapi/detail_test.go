package httpapi

import (
	"bytes"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// The streamed detail is byte for byte what encoding/json writes for the
// same report, whatever falls on a chunk boundary: split runes, invalid
// UTF-8, U+2028, escapes.
func TestStreamedDetailMatchesEncodingJSON(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	at := report.LocalTime{Time: time.Date(2026, 3, 10, 9, 8, 7, 0, time.UTC)}
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := append([]string{"\x01", "é", "\xe2\x80\xa8", "📊", "\xf0\x9f", "\xff"}, jsonStrings...)
	for round := range 8 {
		var b strings.Builder
		for b.Len() < streamAbove+3*streamChunk+round*7 {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		rep := report.Report{ID: 7, ProjectID: 3, FileName: "big.md", FileType: report.MD, FilePath: "/uploads/reports/7.md", UploadTime: at}
		rec := httptest.NewRecorder()
		s.streamReport(rec, httptest.NewRequest("GET", "/api/reports/7", nil), &rep, strings.NewReader(text))
		rep.FileContent = &text
		want := append(stdJSON(t, rep), '\n')
		if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("round %d: streamed body differs at byte %d of %d/%d", round, i, len(got), len(want))
		}
	}
}

func TestCompleteRunes(t *testing.T) {
	for in, want := range map[string]int{
		"": 0, "a": 1, "\xe2": 0, "a\xe2\x80": 1, "a\xe2\x80\xa8": 4, "ab\xf0\x9f\x93": 2, "\x80\x80\x80\x80": 4,
		"\xf0\x20": 2, "\xff": 1, "é": 2, "a\xc3": 1,
	} {
		if got := completeRunes([]byte(in)); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}
