package sniff

import (
	"encoding/binary"
	"io"
	"unicode/utf16"
)

// OLE2 (Compound File Binary, [MS-CFB]) directory reading, just enough to
// name a file's streams: an encrypted Office Open XML document is not a zip
// but an OLE2 file holding "EncryptionInfo" and "EncryptedPackage"
// ([MS-OFFCRYPTO] 2.3.4.4), whatever its name says.

const (
	oleEndOfChain = 0xFFFFFFFE
	oleMaxSectors = 4096 // of the directory chain: 16,384 entries at 512-byte sectors, more than any deck has
)

// ole2Names returns the names of the directory entries of the OLE2 file in
// r (size bytes), or nil when they cannot be read (a damaged file, which
// the engine will then refuse on its own).
func ole2Names(r io.ReaderAt, size int64) []string {
	var h [512]byte
	if n, _ := r.ReadAt(h[:], 0); n < len(h) {
		return nil
	}
	le := binary.LittleEndian
	shift := le.Uint16(h[0x1E:])
	if shift != 9 && shift != 12 {
		return nil
	}
	ssz := int64(1) << shift
	at := func(sector uint32) int64 { return (int64(sector) + 1) * ssz }
	numDIFAT := le.Uint32(h[0x48:])
	firstDIFAT := le.Uint32(h[0x44:])
	// fatSector returns the sector holding the i-th FAT sector's worth of entries.
	fatSector := func(i uint32) (uint32, bool) {
		if i < 109 {
			return le.Uint32(h[0x4C+4*i:]), true
		}
		i -= 109
		per := uint32(ssz/4) - 1 // the last entry of a DIFAT sector chains to the next
		s := firstDIFAT
		for k := uint32(0); k < numDIFAT && k <= i/per; k++ {
			if k == i/per {
				var b [4]byte
				if _, err := r.ReadAt(b[:], at(s)+int64(i%per)*4); err != nil {
					return 0, false
				}
				return le.Uint32(b[:]), true
			}
			var b [4]byte
			if _, err := r.ReadAt(b[:], at(s)+ssz-4); err != nil {
				return 0, false
			}
			s = le.Uint32(b[:])
		}
		return 0, false
	}
	next := func(s uint32) (uint32, bool) {
		per := uint32(ssz / 4)
		fs, ok := fatSector(s / per)
		if !ok || at(fs) >= size {
			return 0, false
		}
		var b [4]byte
		if _, err := r.ReadAt(b[:], at(fs)+int64(s%per)*4); err != nil {
			return 0, false
		}
		return le.Uint32(b[:]), true
	}
	var names []string
	sec := make([]byte, ssz)
	s := le.Uint32(h[0x30:])
	for n := 0; s != oleEndOfChain; n++ {
		if n >= oleMaxSectors || at(s)+ssz > size {
			return nil
		}
		if _, err := r.ReadAt(sec, at(s)); err != nil {
			return nil
		}
		for e := int64(0); e+128 <= ssz; e += 128 {
			ent := sec[e : e+128]
			if ent[0x42] == 0 { // unused entry
				continue
			}
			l := int(le.Uint16(ent[0x40:]))
			if l < 2 || l > 64 {
				continue
			}
			u := make([]uint16, l/2-1) // without the terminating NUL
			for i := range u {
				u[i] = le.Uint16(ent[2*i:])
			}
			names = append(names, string(utf16.Decode(u)))
		}
		var ok bool
		if s, ok = next(s); !ok {
			return nil
		}
	}
	return names
}

// encryptedOOXML reports whether r is an OLE2 file holding an encrypted
// Office Open XML package.
func encryptedOOXML(r io.ReaderAt, size int64) bool {
	var info, pkg bool
	for _, n := range ole2Names(r, size) {
		switch n {
		case "EncryptionInfo":
			info = true
		case "EncryptedPackage":
			pkg = true
		}
	}
	return info && pkg
}
