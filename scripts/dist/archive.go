package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// entry is one file of an archive: its name inside, its bytes (from src
// when data is nil) and its mode.
type entry struct {
	name string
	src  string
	data []byte
	mode int64
}

func (e entry) bytes() ([]byte, error) {
	if e.data != nil {
		return e.data, nil
	}
	return os.ReadFile(e.src)
}

// docs are the files every archive carries besides the binary: README,
// LICENSE, the program's man pages and its shell completions.
func (d *dist) docs(program string) ([]entry, error) {
	es := []entry{
		{name: "README.md", src: filepath.Join(d.repo, "README.md"), mode: 0o644},
		{name: "LICENSE", src: filepath.Join(d.repo, "LICENSE"), mode: 0o644},
	}
	man, err := filepath.Glob(filepath.Join(d.repo, "docs", "man", program+"*.1"))
	if err != nil || len(man) == 0 {
		return nil, fmt.Errorf("no man pages of %s in docs/man (go run ./scripts/gencompletions)", program)
	}
	for _, m := range man {
		es = append(es, entry{name: "man/" + filepath.Base(m), src: m, mode: 0o644})
	}
	for _, sh := range []string{"bash", "zsh", "fish", "ps1"} {
		name := program + "." + sh
		es = append(es, entry{name: "completions/" + name, src: filepath.Join(d.repo, "completions", name), mode: 0o644})
	}
	return es, nil
}

// clientArchive is reportctl_<version>_<os>_<arch>.tar.gz (.zip for windows).
func (d *dist) clientArchive(t target) error {
	es, err := d.docs("reportctl")
	if err != nil {
		return err
	}
	bin := "reportctl" + t.exe()
	es = append(es, entry{name: bin, src: filepath.Join(t.dir(d.out), bin), mode: 0o755})
	base := fmt.Sprintf("reportctl_%s_%s_%s", d.version, t.os, t.arch)
	if t.os == "windows" {
		return d.writeZip(base+".zip", es)
	}
	return d.writeTarGz(base+".tar.gz", es)
}

// serverArchive is reportd_<version>_linux_<arch>.tar.gz: both programs,
// the sample config and the systemd units, for installs without dpkg.
func (d *dist) serverArchive(t target) error {
	es, err := d.docs("reportd")
	if err != nil {
		return err
	}
	more, err := d.docs("reportctl")
	if err != nil {
		return err
	}
	for _, e := range more[2:] { // README and LICENSE are there already
		es = append(es, e)
	}
	es = append(es,
		entry{name: "reportd", src: filepath.Join(t.dir(d.out), "reportd"), mode: 0o755},
		entry{name: "reportctl", src: filepath.Join(t.dir(d.out), "reportctl"), mode: 0o755},
		entry{name: "config/reportd.yaml", src: filepath.Join(d.repo, "config", "reportd.yaml"), mode: 0o644},
	)
	units, _ := filepath.Glob(filepath.Join(d.repo, "examples", "systemd", "*"))
	for _, u := range units {
		mode := int64(0o644)
		if filepath.Ext(u) == ".sh" {
			mode = 0o755
		}
		es = append(es, entry{name: "systemd/" + filepath.Base(u), src: u, mode: mode})
	}
	return d.writeTarGz(fmt.Sprintf("reportd_%s_linux_%s.tar.gz", d.version, t.arch), es)
}

// writeTarGz writes a reproducible tar.gz: names sorted, root-owned, every
// time SOURCE_DATE_EPOCH, no gzip name or time.
func (d *dist) writeTarGz(name string, es []entry) error {
	sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, e := range es {
		if dir := filepath.Dir(e.name); dir != "." && !dirs[dir] {
			dirs[dir] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: d.epoch, Format: tar.FormatUSTAR}); err != nil {
				return err
			}
		}
		data, err := e.bytes()
		if err != nil {
			return err
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(data)), ModTime: d.epoch, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %s: %w", name, e.name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return d.artifact(name, buf.Bytes())
}

// writeZip writes a reproducible zip, like writeTarGz.
func (d *dist) writeZip(name string, es []entry) error {
	sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range es {
		data, err := e.bytes()
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: d.epoch}
		h.SetMode(os.FileMode(e.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return d.artifact(name, buf.Bytes())
}

// artifact writes one file of dist/ that checksums.txt lists.
func (d *dist) artifact(name string, data []byte) error {
	if err := os.WriteFile(filepath.Join(d.out, name), data, 0o644); err != nil {
		return err
	}
	d.artifacts = append(d.artifacts, name)
	fmt.Fprintf(os.Stderr, "dist: %s (%d bytes)\n", name, len(data))
	return nil
}

// gzipBytes compresses data reproducibly (gzip -9n).
func gzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	gz.Write(data)
	gz.Close()
	return buf.Bytes()
}
