package office

import "os"

// Lanes by input size. With one office worker, a deck that takes 20 s made
// every small deck behind it wait 20 s. Decks up to cfg.SmallDeckBytes
// (default 1 MiB; input size, before defusing) therefore go to a lane of
// their own: one more worker, its own gate and queue, so a long deck in the
// main pool never delays them. Decks above it use the main pool. The price
// is one more warm soffice (~160 MiB); SmallDeckBytes < 0 turns the lane
// off. A small deck that is itself slow (tiny but costly) still delays the
// small decks behind it: size is only a guess at cost.

// lane returns the pool a deck at src converts in.
func (e *Engine) lane(src string) *office {
	if e.small == nil {
		return e.main
	}
	if fi, err := os.Stat(src); err == nil && fi.Size() <= e.cfg.SmallDeckBytes {
		return e.small
	}
	return e.main
}
