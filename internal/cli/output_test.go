package cli

import (
	"bytes"
	"testing"
)

func TestTable(t *testing.T) {
	rows := [][]string{{"1", "alpha", "first\tline\nsecond"}, {"12", "b", ""}}
	tests := []struct {
		tty  bool
		want string
	}{
		{true, "ID  NAME   DESCRIPTION\n1   alpha  first line second\n12  b      \n"},
		{false, "1\talpha\tfirst line second\n12\tb\t\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		tb := newTable(&b, tt.tty, "ID", "NAME", "DESCRIPTION")
		for _, r := range rows {
			tb.add(append([]string(nil), r...)...)
		}
		if err := tb.print(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("tty=%v:\n%q\nwant\n%q", tt.tty, b.String(), tt.want)
		}
	}
}

func TestWriteJSONEmptyList(t *testing.T) {
	var b bytes.Buffer
	if err := writeJSON(&b, []uploadResult{}); err != nil || b.String() != "[]\n" {
		t.Fatalf("%q %v", b.String(), err)
	}
}
