package boltstore

import (
	"encoding/json"
	"reflect"
	"testing"
)

var rowSeeds = []string{
	`{"n":"Alpha","c":1700000000,"k":3}`,
	`{"n":"Alpha","d":"desc","c":1700000000,"v":"/uploads/covers/1/a.png","k":0}`,
	`{"n":"季度报告","d":"说明","c":-5,"k":12}`,
	`{"n":"a\u003cb","c":1,"k":1}`,
	`{"n":"tab\there","c":1,"k":1}`,
	`{"N":"case","c":1}`,
	`{"n":"x","extra":1}`,
	`{"d":null,"v":null,"c":0}`,
	` { "n" : "sp" , "c" : 7 } `,
	`{"n":"x","c":01}`,
	`{"n":"x","c":1.5}`,
	`{"n":"x","c":1e3}`,
	`{"n":"x","c":99999999999999999999}`,
	`{"n":"x","c":-0}`,
	`{"n":"dup","n":"last"}`,
	`{"n":"x"} trailing`,
	`{"n":"x",}`,
	`{}`,
	`[]`,
	`{"n":"\xff\xfe"}`,
	`{"p":7,"n":"r.md","t":"md","f":"/uploads/reports/7.md","u":1700000000,"s":10,"h":"ab"}`,
	`{"p":7,"n":"quarterly report.pdf","t":"pdf","f":"/uploads/reports/8.pdf","u":1700000001,"s":123456789,"h":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}`,
	`{"n":"Ret","c":1,"k":2,"r":10,"a":90,"w":false}`,
	`{"n":"Ret","c":1,"r":0,"a":null,"w":true,"w":null}`,
	`{"n":"Ret","r":true,"w":1}`,
	`{"n":"Ret","w":truex}`,
	`{"p":"7"}`,
	`{"p":7,"s":-1,"h":"\u00e9"}`,
	`{"p":7,"n":"index.html","t":"html","g":"playwright","o":4,"x":2,"z":1,"r":1,"k":"site","e":"index.html","w":3,"v":900}`,
	`{"p":7,"r":null,"o":0}`,
}

// The fast decoders must agree with encoding/json on every input: same
// value when both succeed, and an error whenever encoding/json fails.
func FuzzRowDecoders(f *testing.F) {
	for _, s := range rowSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fastP, slowP projectRow
		errFast, errSlow := unmarshalProjectRow(b, &fastP), json.Unmarshal(b, &slowP)
		if (errFast == nil) != (errSlow == nil) || (errSlow == nil && !reflect.DeepEqual(fastP, slowP)) {
			t.Fatalf("project row %q: fast %+v (%v), encoding/json %+v (%v)", b, fastP, errFast, slowP, errSlow)
		}
		var fastR, slowR reportRow
		errFast, errSlow = unmarshalReportRow(b, &fastR), json.Unmarshal(b, &slowR)
		if (errFast == nil) != (errSlow == nil) || (errSlow == nil && !reflect.DeepEqual(fastR, slowR)) {
			t.Fatalf("report row %q: fast %+v (%v), encoding/json %+v (%v)", b, fastR, errFast, slowR, errSlow)
		}
	})
}

// Rows as this package writes them take the fast path.
func TestWrittenRowsTakeTheFastPath(t *testing.T) {
	d, c := "a description", "/uploads/covers/1/x.png"
	for _, row := range []projectRow{{Name: "Alpha"}, {Name: "季度", Description: &d, Cover: &c, Created: 1700000000, Count: 4}} {
		b, _ := json.Marshal(row)
		var got projectRow
		if !scanProjectRow(b, &got) || !reflect.DeepEqual(got, row) {
			t.Errorf("%s: fast path %+v", b, got)
		}
	}
	r := reportRow{Project: 3, Name: "report.md", Type: "md", Path: "/uploads/reports/9.md", Uploaded: 1700000000, Size: 12, SHA256: "ab"}
	b, _ := json.Marshal(r)
	var got reportRow
	if !scanReportRow(b, &got) || got != r {
		t.Errorf("%s: fast path %+v", b, got)
	}
}
