package testfixture

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"slices"
	"testing"
)

// Zip is a zip archive of files (name -> content), its entries in name
// order, each under prefix ("" for none, "site/" for one top folder).
func Zip(t testing.TB, prefix string, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range sortedKeys(files) {
		w, err := zw.Create(prefix + n)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// UploadBody is the multipart body of POST /api/reports and its
// Content-Type: projectId, fileType, the fields (in name order), then the
// file.
func UploadBody(project int64, fileType, name string, content []byte, fields map[string]string) (string, *bytes.Buffer) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("projectId", fmt.Sprint(project))
	mw.WriteField("fileType", fileType)
	for _, k := range sortedKeys(fields) {
		mw.WriteField(k, fields[k])
	}
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.Close()
	return mw.FormDataContentType(), &buf
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
