package httpapi

import (
	"bufio"
	"context"
	"io"
	"mime/multipart"
	"path"
	"strings"

	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/service"
	"github.com/reportd/reportd/internal/site"
)

// stageFirst stages the first file part as any upload. When it is a tar
// archive (plain, gzip or zstd: site.Streamable) declared html before it
// came, and not named .html, it is also read as a site while it arrives,
// into u.streamed: its files are checked, hashed and staged as the bytes
// come in, so that once the body ends only the commit is left. Zip cannot
// be read this way (its directory is at the end).
//
// The staged copy is still written and hashed (the Idempotency-Key
// fingerprint, and the fallback): a streamed read that fails is dropped
// and CommitSite ingests the staged copy, so every refusal is the one the
// whole archive gets, whichever way it was read.
func (s *Server) stageFirst(ctx context.Context, u *siteParts, part *multipart.Part, html bool) (*files.Staged, error) {
	ext := strings.ToLower(path.Ext(part.FileName()))
	if !html || ext == ".html" || ext == ".htm" {
		return s.svc.Stage(part)
	}
	br := bufio.NewReaderSize(part, 64<<10)
	head, _ := br.Peek(512) // a short or failing part: Stage reports it
	format := service.ArchiveFormat(head)
	if !site.Streamable(format) {
		return s.svc.Stage(br)
	}
	release, ok := s.svc.TryStreamSite()
	if !ok {
		u.streamMiss = "busy"
		return s.svc.Stage(br) // the store cannot, or enough are read so already
	}
	pr, pw := io.Pipe()
	type result struct {
		st  *site.Staged
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := s.svc.StageSiteStream(ctx, pr, format)
		release()
		io.Copy(io.Discard, pr) // the rest of the part, if the read stopped early
		done <- result{st, err}
	}()
	st, err := s.svc.Stage(io.TeeReader(br, pw))
	pw.CloseWithError(err) // nil: the streamed read sees the part's end
	res := <-done
	if err != nil || res.err != nil {
		res.st.Discard()
		if err == nil {
			u.streamMiss = "refused"
			s.log.Debug("a site read as it arrived was refused; the staged copy is ingested instead", "err", res.err)
		}
		return st, err
	}
	u.streamed = res.st
	return st, nil
}
