package ops

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/version"
)

// A backup archive is a plain tar (report files are mostly compressed
// already): reportd.db, then every referenced file under uploads/, then
// MANIFEST.json with the size and sha256 of each entry before it. The
// manifest comes last because it is written while streaming; an archive
// without it was cut short and is refused.
const (
	ManifestName  = "MANIFEST.json"
	DBEntryName   = "reportd.db"
	archiveFormat = 1
)

// Manifest describes a backup archive.
type Manifest struct {
	Format   int             `json:"format"`
	Created  time.Time       `json:"created"`
	Version  string          `json:"reportdVersion"`
	Entries  []ManifestEntry `json:"entries"`
	Missing  []string        `json:"missing,omitempty"` // rows whose file was already gone
	Complete bool            `json:"complete"`
}

// ManifestEntry is one archived file.
type ManifestEntry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// WriteArchive streams the snapshot as a tar to w.
func WriteArchive(w io.Writer, s *Snapshot) (Manifest, error) {
	m := Manifest{Format: archiveFormat, Created: time.Now().UTC().Truncate(time.Second), Version: version.String(), Missing: s.missing}
	tw := tar.NewWriter(w)
	add := func(name, src string) error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: name, Mode: 0o600, Size: fi.Size(), ModTime: fi.ModTime().Truncate(time.Second), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(tw, h), f); err != nil {
			return err
		}
		m.Entries = append(m.Entries, ManifestEntry{Name: name, Size: fi.Size(), SHA256: hex.EncodeToString(h.Sum(nil))})
		return nil
	}
	if err := add(DBEntryName, s.db); err != nil {
		return m, fmt.Errorf("archive %s: %w", DBEntryName, err)
	}
	for _, f := range s.files {
		if err := add(f.name, f.path); err != nil {
			return m, fmt.Errorf("archive %s: %w", f.name, err)
		}
	}
	m.Complete = true
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	b = append(b, '\n')
	hdr := &tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(b)), ModTime: m.Created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return m, err
	}
	if _, err := tw.Write(b); err != nil {
		return m, err
	}
	return m, tw.Close()
}

// archiveName checks an entry name: reportd.db, the manifest, or a plain
// relative path below uploads/ — nothing absolute, nothing with "..".
func archiveName(name string) (string, error) {
	if name == DBEntryName || name == ManifestName {
		return name, nil
	}
	clean := path.Clean(name)
	if clean != name || !strings.HasPrefix(clean, "uploads/") || strings.Contains(name, "\\") ||
		strings.ContainsRune(name, 0) || strings.Contains("/"+clean+"/", "/../") {
		return "", fmt.Errorf("archive entry %q is not a reportd data file", name)
	}
	return clean, nil
}

// ReadArchive walks a backup archive, giving each data entry to fn with a
// reader of its bytes, and checks every entry against the manifest at the
// end: same set of names, same sizes, same sha256. fn may be nil (verify
// only). A missing, incomplete or disagreeing manifest is an error.
func ReadArchive(r io.Reader, fn func(name string, size int64, body io.Reader) error) (Manifest, error) {
	var m Manifest
	got := map[string]ManifestEntry{}
	sawManifest := false
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return m, fmt.Errorf("read archive: %w", err)
		}
		if sawManifest {
			return m, fmt.Errorf("archive has entries after %s", ManifestName)
		}
		if hdr.Typeflag != tar.TypeReg {
			return m, fmt.Errorf("archive entry %q is not a regular file", hdr.Name)
		}
		name, err := archiveName(hdr.Name)
		if err != nil {
			return m, err
		}
		if name == ManifestName {
			if err := json.NewDecoder(io.LimitReader(tr, 64<<20)).Decode(&m); err != nil {
				return m, fmt.Errorf("read %s: %w", ManifestName, err)
			}
			sawManifest = true
			continue
		}
		if _, dup := got[name]; dup {
			return m, fmt.Errorf("archive has %q twice", name)
		}
		h := sha256.New()
		body := io.TeeReader(tr, h)
		if fn != nil {
			if err := fn(name, hdr.Size, body); err != nil {
				return m, err
			}
		}
		if _, err := io.Copy(io.Discard, body); err != nil { // whatever fn left unread
			return m, fmt.Errorf("read %s: %w", name, err)
		}
		got[name] = ManifestEntry{Name: name, Size: hdr.Size, SHA256: hex.EncodeToString(h.Sum(nil))}
	}
	if !sawManifest {
		return m, fmt.Errorf("archive has no %s: it is truncated or not a reportd backup", ManifestName)
	}
	if m.Format != archiveFormat || !m.Complete {
		return m, fmt.Errorf("archive format %d (complete=%v) is not one this reportd reads", m.Format, m.Complete)
	}
	if len(m.Entries) != len(got) {
		return m, fmt.Errorf("manifest lists %d files, archive holds %d", len(m.Entries), len(got))
	}
	for _, e := range m.Entries {
		g, ok := got[e.Name]
		switch {
		case !ok:
			return m, fmt.Errorf("manifest lists %s, archive lacks it", e.Name)
		case g.Size != e.Size || g.SHA256 != e.SHA256:
			return m, fmt.Errorf("checksum mismatch for %s: archive has %d bytes sha256 %s, manifest says %d bytes sha256 %s", e.Name, g.Size, g.SHA256, e.Size, e.SHA256)
		}
	}
	if _, ok := got[DBEntryName]; !ok {
		return m, fmt.Errorf("archive has no %s", DBEntryName)
	}
	return m, nil
}
