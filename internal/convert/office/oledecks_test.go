package office

// Decks as OLE2 compound files, built here. ppt95Deck: a PowerPoint 95 deck: no tool on this machine writes that
// format (LibreOffice imports it with libmwaw's "PowerPoint 3" filter and
// exports nothing older than PowerPoint 97), and no file from elsewhere is
// committed. ppt95Deck writes the smallest deck libmwaw's PowerPoint 95
// reader takes: an OLE2 compound file holding "PowerPoint Document" (the
// PowerPoint 95 record tree: document root, document atom with the page
// size, a slide list with one slide), "PersistentStorage Directory" and a
// SummaryInformation property set with the title. The slide is blank; the
// page size and title show that the file's own content was read.

import (
	"encoding/binary"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"
)

// ppt95Deck is a one-slide PowerPoint 95 deck of 8 x 6 inches titled title.
func ppt95Deck(title string) []byte {
	atom := make([]byte, 44)
	copy(atom, le32s(4608, 3456, 4608, 3456))                       // page and paper: 8 x 6 in, 576 units an inch
	slide := pp95Zone(1006, 16, pp95Zone(1007, 0, le32s(0x100, 0))) // slide id 0x100, no master
	doc := pp95Zone(1000, 0,
		pp95Zone(1001, 0, atom),
		pp95Zone(2000, 10, pp95Zone(2001, 0, le32s(1)), slide),
		pp95Zone(1002, 0))
	// The reader wants a root of at least 100 bytes: pad it with a record
	// of a type it skips.
	root := pp95Zone(3, 0, doc, pp95Zone(9999, 0, make([]byte, 64)))
	return cfbFile(map[string][]byte{
		"PowerPoint Document":         root,
		"PersistentStorage Directory": make([]byte, 16),
		"\x05SummaryInformation":      summaryInfo(title),
	})
}

const (
	cfbFree = 0xFFFFFFFF
	cfbEnd  = 0xFFFFFFFE
	cfbFAT  = 0xFFFFFFFD
	cfbNone = 0xFFFFFFFF
)

// cfbFile writes a version 3 compound file holding the given streams in its root storage.
func cfbFile(streams map[string][]byte) []byte {
	le := binary.LittleEndian
	names := make([]string, 0, len(streams))
	for n := range streams {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { // CFB order: shorter first, then case-insensitive
		a, b := utf16.Encode([]rune(names[i])), utf16.Encode([]rune(names[j]))
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return strings.ToUpper(names[i]) < strings.ToUpper(names[j])
	})
	var sectors [][]byte
	var fat []uint32
	alloc := func(data []byte) uint32 { // consecutive sectors holding data, chained
		first := uint32(len(sectors))
		n := (len(data) + 511) / 512
		for i := 0; i < n; i++ {
			s := make([]byte, 512)
			copy(s, data[i*512:])
			sectors = append(sectors, s)
			if i == n-1 {
				fat = append(fat, cfbEnd)
			} else {
				fat = append(fat, uint32(len(sectors)))
			}
		}
		return first
	}
	// Small streams go to the mini stream (64-byte mini sectors).
	var mini []byte
	var miniFAT []uint32
	start := map[string]uint32{}
	for _, n := range names {
		d := streams[n]
		if len(d) >= 4096 {
			continue
		}
		if len(d) == 0 {
			start[n] = cfbEnd
			continue
		}
		first := uint32(len(mini) / 64)
		k := max(1, (len(d)+63)/64)
		for i := 0; i < k; i++ {
			if i == k-1 {
				miniFAT = append(miniFAT, cfbEnd)
			} else {
				miniFAT = append(miniFAT, uint32(len(miniFAT)+1))
			}
		}
		buf := make([]byte, k*64)
		copy(buf, d)
		mini = append(mini, buf...)
		start[n] = first
	}
	miniStart, miniFATStart := uint32(cfbEnd), uint32(cfbEnd)
	nMiniFAT := 0
	if len(mini) > 0 {
		miniStart = alloc(mini)
		mf := make([]byte, ((len(miniFAT)*4+511)/512)*512)
		for i := range mf {
			mf[i] = 0xFF
		}
		for i, v := range miniFAT {
			le.PutUint32(mf[4*i:], v)
		}
		miniFATStart = alloc(mf)
		nMiniFAT = len(mf) / 512
	}
	for _, n := range names {
		if d := streams[n]; len(d) >= 4096 {
			start[n] = alloc(d)
		}
	}
	// Directory: root, then the streams, chained as right siblings in order.
	entry := func(name string, typ byte, right, child, st uint32, size int) []byte {
		e := make([]byte, 128)
		u := utf16.Encode([]rune(name))
		for i, c := range u {
			le.PutUint16(e[2*i:], c)
		}
		le.PutUint16(e[64:], uint16(2*len(u)+2))
		e[66], e[67] = typ, 1 // black
		le.PutUint32(e[68:], cfbNone)
		le.PutUint32(e[72:], right)
		le.PutUint32(e[76:], child)
		le.PutUint32(e[116:], st)
		le.PutUint64(e[120:], uint64(size))
		return e
	}
	var dir []byte
	dir = append(dir, entry("Root Entry", 5, cfbNone, 1, miniStart, len(mini))...)
	for i, n := range names {
		right := uint32(cfbNone)
		if i+1 < len(names) {
			right = uint32(i + 2)
		}
		dir = append(dir, entry(n, 2, right, cfbNone, start[n], len(streams[n]))...)
	}
	for len(dir)%512 != 0 {
		e := make([]byte, 128)
		le.PutUint32(e[68:], cfbNone)
		le.PutUint32(e[72:], cfbNone)
		le.PutUint32(e[76:], cfbNone)
		dir = append(dir, e...)
	}
	dirStart := alloc(dir)
	// The FAT goes last: as many sectors as it takes to map them all and itself.
	nFAT := 1
	for len(sectors)+nFAT > 128*nFAT {
		nFAT++
	}
	if nFAT > 109 {
		panic("the FAT needs DIFAT sectors, which are not written here")
	}
	firstFAT := len(sectors)
	for range nFAT {
		fat = append(fat, cfbFAT)
	}
	for len(fat) < 128*nFAT {
		fat = append(fat, cfbFree)
	}
	for k := range nFAT {
		fs := make([]byte, 512)
		for i := range 128 {
			le.PutUint32(fs[4*i:], fat[k*128+i])
		}
		sectors = append(sectors, fs)
	}
	h := make([]byte, 512)
	copy(h, "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1")
	le.PutUint16(h[24:], 0x3E)
	le.PutUint16(h[26:], 3)
	le.PutUint16(h[28:], 0xFFFE)
	le.PutUint16(h[30:], 9)
	le.PutUint16(h[32:], 6)
	le.PutUint32(h[44:], uint32(nFAT))
	le.PutUint32(h[48:], dirStart)
	le.PutUint32(h[56:], 4096)
	le.PutUint32(h[60:], miniFATStart)
	le.PutUint32(h[64:], uint32(nMiniFAT))
	le.PutUint32(h[68:], cfbEnd)
	for i := 76; i < 512; i += 4 {
		le.PutUint32(h[i:], cfbFree)
	}
	for k := range nFAT {
		le.PutUint32(h[76+4*k:], uint32(firstFAT+k))
	}
	out := h
	for _, s := range sectors {
		out = append(out, s...)
	}
	return out
}

// pp95Zone is a PowerPoint 95 record: type, three shorts, data size, two bytes, a short.
func pp95Zone(typ uint16, inst byte, data ...[]byte) []byte {
	var body []byte
	for _, d := range data {
		body = append(body, d...)
	}
	h := make([]byte, 16)
	le := binary.LittleEndian
	le.PutUint16(h[0:], typ)
	le.PutUint16(h[2:], 0)
	le.PutUint16(h[4:], 0xFFFF)
	le.PutUint16(h[6:], 0)
	le.PutUint32(h[8:], uint32(len(body)))
	h[12] = inst
	return append(h, body...)
}

func le32s(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// summaryInfo is a SummaryInformation property set holding a code page and a title.
func summaryInfo(title string) []byte {
	le := binary.LittleEndian
	t := append([]byte(title), 0)
	for len(t)%4 != 0 {
		t = append(t, 0)
	}
	props := []byte{}
	// code page (1): VT_I2 1252
	cp := make([]byte, 8)
	le.PutUint32(cp, 2)
	le.PutUint16(cp[4:], 1252)
	// title (2): VT_LPSTR
	ti := make([]byte, 8)
	le.PutUint32(ti, 0x1E)
	le.PutUint32(ti[4:], uint32(len(title)+1))
	ti = append(ti, t...)
	const head = 8 + 2*8
	props = append(props, cp...)
	props = append(props, ti...)
	sec := make([]byte, head)
	le.PutUint32(sec[0:], uint32(head+len(props)))
	le.PutUint32(sec[4:], 2)
	le.PutUint32(sec[8:], 1)
	le.PutUint32(sec[12:], head)
	le.PutUint32(sec[16:], 2)
	le.PutUint32(sec[20:], head+8)
	sec = append(sec, props...)
	h := make([]byte, 48)
	le.PutUint16(h[0:], 0xFFFE)
	le.PutUint32(h[4:], 0x00020004)
	le.PutUint32(h[24:], 1)
	copy(h[28:], []byte{0xE0, 0x85, 0x9F, 0xF2, 0xF9, 0x4F, 0x68, 0x10, 0xAB, 0x91, 0x08, 0x00, 0x2B, 0x27, 0xB3, 0xD9})
	le.PutUint32(h[44:], 48)
	return append(h, sec...)
}

// cfbStreams reads the streams in the root storage of compound file b (the
// tests' own decks: no storages below the root, one FAT sector chain).
func cfbStreams(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	le := binary.LittleEndian
	if len(b) < 512 || le.Uint16(b[30:]) != 9 {
		t.Fatal("not a compound file with 512-byte sectors")
	}
	sector := func(s uint32) []byte {
		off := (int(s) + 1) * 512
		if off+512 > len(b) {
			t.Fatalf("sector %d beyond the file", s)
		}
		return b[off : off+512]
	}
	var fat []uint32
	for i := 0; i < 109 && i < int(le.Uint32(b[44:])); i++ {
		fs := sector(le.Uint32(b[76+4*i:]))
		for j := 0; j < 128; j++ {
			fat = append(fat, le.Uint32(fs[4*j:]))
		}
	}
	if le.Uint32(b[44:]) > 109 {
		t.Fatal("DIFAT sectors are not read here")
	}
	chain := func(next []uint32, s uint32, get func(uint32) []byte) []byte {
		var out []byte
		for n := 0; s != cfbEnd; n++ {
			if int(s) >= len(next) || n > len(next) {
				t.Fatalf("broken chain at %d", s)
			}
			out = append(out, get(s)...)
			s = next[s]
		}
		return out
	}
	dir := chain(fat, le.Uint32(b[48:]), sector)
	miniFAT := []uint32{}
	if mf := le.Uint32(b[60:]); mf != cfbEnd {
		m := chain(fat, mf, sector)
		for j := 0; j+4 <= len(m); j += 4 {
			miniFAT = append(miniFAT, le.Uint32(m[j:]))
		}
	}
	var ministream []byte
	out := map[string][]byte{}
	for e := 0; e+128 <= len(dir); e += 128 {
		ent := dir[e : e+128]
		typ, start, size := ent[66], le.Uint32(ent[116:]), int(le.Uint32(ent[120:]))
		n := int(le.Uint16(ent[64:]))
		if typ == 0 || n < 2 {
			continue
		}
		u := make([]uint16, n/2-1)
		for i := range u {
			u[i] = le.Uint16(ent[2*i:])
		}
		name := string(utf16.Decode(u))
		switch {
		case typ == 5:
			ministream = chain(fat, start, sector)
		case typ != 2:
			t.Fatalf("storage %q: only root streams are read here", name)
		case size == 0:
			out[name] = []byte{}
		case size >= 4096:
			out[name] = chain(fat, start, sector)[:size]
		default:
			out[name] = chain(miniFAT, start, func(s uint32) []byte {
				return ministream[int(s)*64 : int(s)*64+64]
			})[:size]
		}
	}
	return out
}

// encryptedPPT is deck.ppt laid out as PowerPoint lays out a
// password-protected deck ([MS-PPT] 2.1.2, 2.3.7): the summary moved into
// an "EncryptedSummary" stream, and the Current User atom's header token
// 0xF3D1C4DF ("encrypted") instead of 0xE391C05F. The content is not
// really encrypted: LibreOffice refuses such a deck for its EncryptedSummary
// stream before reading anything else, and cannot decrypt one anyway.
// With marked false, the same rebuild without those marks (the control).
func encryptedPPT(t *testing.T, marked bool) []byte {
	t.Helper()
	streams := cfbStreams(t, fixture(t, "deck.ppt"))
	cu := streams["Current User"]
	if len(cu) < 16 || binary.LittleEndian.Uint32(cu[12:]) != 0xE391C05F {
		t.Fatalf("deck.ppt: unexpected Current User stream %x", cu)
	}
	if marked {
		cu = append([]byte{}, cu...)
		binary.LittleEndian.PutUint32(cu[12:], 0xF3D1C4DF)
		streams["Current User"] = cu
		streams["EncryptedSummary"] = streams["\x05SummaryInformation"]
		delete(streams, "\x05SummaryInformation")
	}
	return cfbFile(streams)
}
