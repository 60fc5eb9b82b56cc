package site

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/reportd/reportd/internal/blob"
)

// MakeVariantsOf makes the missing variants of many content objects, as
// MakeVariants does for each. Where the store offers batches (local), the
// copies are written in two batches: every coding but the last, then the
// last coding's copies and the .none markers, which mark an object done;
// so an object is never done before its other copies are durable and
// visible, and the disk is flushed twice for all of them instead of a
// file and a folder fsync for each copy (three for each file of a large
// site). Elsewhere (S3) each object is made with MakeVariants. before,
// when set, is called before each object (the caller waits there while
// uploads run, or stops by returning an error, which MakeVariantsOf
// returns once it committed what it made, if its context allows).
func MakeVariantsOf(ctx context.Context, store blob.Store, shas []string, tempDir string, before func() error) error {
	bs, ok := store.(blob.Batcher)
	if !ok {
		for _, sha := range shas {
			if before != nil {
				if err := before(); err != nil {
					return err
				}
			}
			if _, err := MakeVariants(ctx, store, sha, tempDir); err != nil {
				return err
			}
		}
		return nil
	}
	type todo struct {
		sha string
		v   Variants
	}
	var work []todo
	for _, sha := range shas {
		v, err := LookupVariants(ctx, store, sha)
		if err != nil {
			return err
		}
		if !v.Done && isSHA256(sha) {
			work = append(work, todo{sha, v})
		}
	}
	last := len(Encoders) - 1
	for pass, encs := range [][]Encoder{Encoders[:last], Encoders[last:]} {
		b := bs.NewBatch()
		var stopped error
		for i := range work {
			if before != nil {
				if stopped = before(); stopped != nil {
					break
				}
			}
			w := &work[i]
			ok, err := variantsInto(ctx, store, batchPut{b}, w.sha, &w.v, encs, tempDir)
			if err != nil {
				b.Discard()
				return err
			}
			if ok && pass == 1 && w.v.Size(Encoders[last].Name) == 0 {
				if err := b.Put(ctx, noneKey(w.sha), bytes.NewReader(nil), blob.PutOptions{IfNoneMatch: true}); err != nil {
					b.Discard()
					return err
				}
			}
		}
		if err := b.Commit(ctx); err != nil {
			return err
		}
		if stopped != nil {
			return stopped
		}
	}
	return nil
}

// variantsInto makes the copies of sha in encs that v lacks, stored
// through dst; ok is false when the original is gone (nothing to
// compress).
func variantsInto(ctx context.Context, store blob.Store, dst variantSink, sha string, v *Variants, encs []Encoder, tempDir string) (ok bool, err error) {
	o, err := store.Open(ctx, ObjectKey(sha))
	if errors.Is(err, blob.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer o.Close()
	size := o.Info().Size
	for _, e := range encs {
		if v.Size(e.Name) > 0 {
			continue // made before a crash
		}
		n, err := compressed(ctx, ObjectKey(sha)+e.Suffix, tempDir, io.NewSectionReader(o, 0, size), size, e.New, dst)
		if err != nil {
			return false, err
		}
		v.set(e.Name, n)
	}
	return true, nil
}
