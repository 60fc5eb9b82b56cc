package client

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reportd/reportd/internal/report"
)

// part is one field of a multipart body: a value, or a file when up is set.
type part struct {
	name  string
	value string
	up    *report.Upload
	ctype string // of the file part
}

// pipeBody streams a multipart body written by a goroutine, so a file of any
// size goes out without being held in memory.
type pipeBody struct {
	*io.PipeReader
	mu  sync.Mutex
	err error // the producer's own failure (opening or reading the file)
}

func (p *pipeBody) producerErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// multipartBody returns a body func for call.body. Each call re-opens every
// file through Upload.Open; an Upload without Open can be sent only once.
func multipartBody(parts []part) func() (io.ReadCloser, string, error) {
	used := false
	return func() (io.ReadCloser, string, error) {
		files := make([]io.ReadCloser, len(parts))
		for i, p := range parts {
			if p.up == nil {
				continue
			}
			rc, err := openUpload(p.up, used)
			if err != nil {
				closeAll(files)
				return nil, "", err
			}
			files[i] = rc
		}
		used = true
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		body := &pipeBody{PipeReader: pr}
		go func() {
			defer closeAll(files)
			err := writeParts(mw, parts, files)
			if err == nil {
				err = mw.Close()
			}
			if err != nil && !errors.Is(err, io.ErrClosedPipe) {
				body.mu.Lock()
				body.err = err
				body.mu.Unlock()
			}
			pw.CloseWithError(err)
		}()
		return body, mw.FormDataContentType(), nil
	}
}

func openUpload(u *report.Upload, reused bool) (io.ReadCloser, error) {
	if u.Open != nil {
		rc, err := u.Open()
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", u.FileName, err)
		}
		return rc, nil
	}
	if u.Body == nil {
		return nil, fmt.Errorf("upload %s: no body", u.FileName)
	}
	if reused {
		return nil, fmt.Errorf("upload %s: cannot retry, the body was already sent and Upload.Open is not set", u.FileName)
	}
	return io.NopCloser(u.Body), nil
}

func writeParts(mw *multipart.Writer, parts []part, files []io.ReadCloser) error {
	for i, p := range parts {
		if p.up == nil {
			if err := mw.WriteField(p.name, p.value); err != nil {
				return err
			}
			continue
		}
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`,
			escapeQuotes(p.name), escapeQuotes(filepath.Base(p.up.FileName))))
		ctype := p.ctype
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		h.Set("Content-Type", ctype)
		w, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, files[i]); err != nil {
			return err
		}
	}
	return nil
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")

func escapeQuotes(s string) string { return quoteEscaper.Replace(s) }

func closeAll(cs []io.ReadCloser) {
	for _, c := range cs {
		if c != nil {
			c.Close()
		}
	}
}
