package dirzip

import "github.com/reportd/reportd/internal/bufpool"

// Buffers for the files read into memory, pooled by power-of-two size
// from 4 KiB to 64 KiB (a report site's pages, scripts and styles).
// Larger files get a buffer of their own size, so rounding up adds at
// most 32 KiB a file to what the files read ahead of the writer hold (at
// most window of them).
var bufs = bufpool.New(12, 16)

// readSlack is room past the size at scan time for the read that finds
// the end (bytes.MinRead).
const readSlack = 512
