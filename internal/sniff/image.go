package sniff

import "bytes"

// ImageExt names the cover formats DESIGN.md accepts (PNG, JPEG, GIF,
// WebP) by their leading bytes, as the extension a stored cover gets;
// "" when head is none of them.
func ImageExt(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return ".png"
	case bytes.HasPrefix(head, []byte("\xFF\xD8\xFF")):
		return ".jpg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return ".gif"
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return ".webp"
	}
	return ""
}
