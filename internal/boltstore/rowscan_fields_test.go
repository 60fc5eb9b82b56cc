package boltstore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// TestEveryRowFieldTakesTheFastPath fills every field of each row struct
// by reflection, each with its own non-zero value, and decodes what
// json.Marshal writes through both the fast path and encoding/json. A
// field added to a row but not to its scanner makes the fast path refuse
// the row (an unknown key), and a key mapped to the wrong field shows up
// as a different value, so neither can slip through unnoticed.
func TestEveryRowFieldTakesTheFastPath(t *testing.T) {
	t.Run("projectRow", func(t *testing.T) {
		checkAllFields(t, func(b []byte, row *projectRow) bool { return scanProjectRow(b, row) })
	})
	t.Run("reportRow", func(t *testing.T) {
		checkAllFields(t, func(b []byte, row *reportRow) bool { return scanReportRow(b, row) })
	})
}

func checkAllFields[R any](t *testing.T, scan func([]byte, *R) bool) {
	t.Helper()
	var want R
	fillFields(t, reflect.ValueOf(&want).Elem())
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var fast R
	if !scan(b, &fast) {
		t.Fatalf("%s: the fast path refused a row with every field set (a field it does not know?)", b)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("%s: fast path decoded %+v, want %+v", b, fast, want)
	}
	var slow R
	if err := json.Unmarshal(b, &slow); err != nil || !reflect.DeepEqual(slow, want) {
		t.Fatalf("%s: encoding/json decoded %+v (%v), want %+v", b, slow, err, want)
	}
	// Each field alone, too: a scanner that needs a neighbour to decode a
	// field would pass the test above.
	rt := reflect.TypeFor[R]()
	for i := range rt.NumField() {
		var one R
		reflect.ValueOf(&one).Elem().Field(i).Set(reflect.ValueOf(want).Field(i))
		b, _ := json.Marshal(one)
		var got R
		if !scan(b, &got) || !reflect.DeepEqual(got, one) {
			t.Errorf("field %s alone, %s: fast path %+v", rt.Field(i).Name, b, got)
		}
	}
}

// fillFields gives every field of struct v a distinct non-zero value; a
// kind it does not know fails the test, so a new field type extends it.
func fillFields(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if !fill(f, i+1) {
			t.Fatalf("field %s of %s has kind %s: teach fill (and the row scanner) about it", name, v.Type(), f.Type())
		}
		if f.IsZero() {
			t.Fatalf("field %s of %s is still zero", name, v.Type())
		}
	}
}

func fill(f reflect.Value, n int) bool {
	switch f.Kind() {
	case reflect.String:
		// Non-ASCII and spaces, as names have, but no escapes: the fast
		// path hands escaped strings to encoding/json by design.
		f.SetString(fmt.Sprintf("value %d é 报告", n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.SetInt(int64(n) * 1_000_000_007)
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if !fill(p.Elem(), n) {
			return false
		}
		f.Set(p)
	default:
		return false
	}
	return true
}
