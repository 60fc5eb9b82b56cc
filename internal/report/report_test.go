package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseFileType(t *testing.T) {
	for in, want := range map[string]FileType{"html": HTML, " PDF ": PDF, "Pptx": PPTX, "md": MD, "ppt": PPT} {
		if got, err := ParseFileType(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, in := range []string{"", "htm", "docx", "markdown", "pdf2"} {
		if _, err := ParseFileType(in); KindOf(err) != Validation {
			t.Errorf("%q accepted or wrong kind: %v", in, err)
		}
	}
}

func TestTypeOfName(t *testing.T) {
	for in, want := range map[string]FileType{"a.HTML": HTML, "x.y.md": MD, "deck.pptx": PPTX} {
		if got, ok := TypeOfName(in); !ok || got != want {
			t.Errorf("%q: %q %v", in, got, ok)
		}
	}
	for _, in := range []string{"noext", "a.htm", "a.", ".md.txt"} {
		if _, ok := TypeOfName(in); ok {
			t.Errorf("%q inferred a type", in)
		}
	}
}

func TestErrorKinds(t *testing.T) {
	inner := errors.New("disk on fire")
	err := fmt.Errorf("context: %w", Wrap(Storage, inner, "cannot store"))
	if KindOf(err) != Storage || MessageOf(err) != "cannot store" || !errors.Is(err, inner) {
		t.Fatalf("wrap: %v %q", KindOf(err), MessageOf(err))
	}
	if KindOf(errors.New("x")) != Internal || MessageOf(errors.New("secret")) != "internal error" {
		t.Fatal("unknown errors must not leak their text")
	}
}

func TestLocalTimeJSON(t *testing.T) {
	loc := time.FixedZone("X", 5*3600)
	lt := LocalTime{time.Date(2026, 1, 2, 3, 4, 5, 0, loc)}
	b, _ := json.Marshal(lt)
	if string(b) != `"2026-01-02T03:04:05"` {
		t.Fatalf("marshal: %s", b)
	}
	var back LocalTime
	if err := json.Unmarshal(b, &back); err != nil || back.Format(LocalLayout) != "2026-01-02T03:04:05" {
		t.Fatalf("unmarshal: %v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`"yesterday"`), &back); err == nil {
		t.Fatal("bad date accepted")
	}
}

func TestParseID(t *testing.T) {
	for _, ok := range []struct {
		raw  string
		want int64
	}{{"1", 1}, {"42", 42}, {"007", 7}, {"9223372036854775807", 1<<63 - 1}} {
		if got, err := ParseID("id", ok.raw); err != nil || got != ok.want {
			t.Errorf("ParseID(%q) = %d, %v; want %d", ok.raw, got, err, ok.want)
		}
	}
	for _, raw := range []string{"", "0", "00", "-1", "+1", " 1", "1 ", "1\n", "1e3", "0x10", "1_000", "١", "9223372036854775808", "99999999999999999999"} {
		_, err := ParseID("projectId", raw)
		var e *Error
		if !errors.As(err, &e) || e.Kind != Validation || !strings.HasPrefix(e.Message, "projectId must be a positive integer") {
			t.Errorf("ParseID(%q): got %v, want a ValidationError naming projectId", raw, err)
		}
	}
}
