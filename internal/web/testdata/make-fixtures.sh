#!/bin/sh
# Regenerates the binary fixtures of the browser test: release-deck.pptx and
# release-deck.pdf (LibreOffice converts a flat ODF presentation written
# below) and cover.png (a bar chart on a gradient, drawn with Python's
# standard library). Run from this directory.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/release-deck.fodp" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
 xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
 office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.presentation">
 <office:automatic-styles>
  <style:page-layout style:name="PM1">
   <style:page-layout-properties fo:page-width="28cm" fo:page-height="15.75cm" style:print-orientation="landscape"/>
  </style:page-layout>
  <style:style style:name="T" style:family="paragraph">
   <style:text-properties fo:font-size="40pt" fo:font-weight="bold" style:font-name="Carlito"/>
  </style:style>
  <style:style style:name="B" style:family="paragraph">
   <style:text-properties fo:font-size="24pt" style:font-name="Carlito"/>
  </style:style>
 </office:automatic-styles>
 <office:master-styles>
  <style:master-page style:name="Default" style:page-layout-name="PM1"/>
 </office:master-styles>
 <office:body>
  <office:presentation>
   <draw:page draw:name="one" draw:master-page-name="Default">
    <draw:frame svg:x="2cm" svg:y="2cm" svg:width="24cm" svg:height="3cm"><draw:text-box><text:p text:style-name="T">Release 2.4 review</text:p></draw:text-box></draw:frame>
    <draw:frame svg:x="2cm" svg:y="6cm" svg:width="24cm" svg:height="6cm"><draw:text-box><text:p text:style-name="B">1,284 tests passed, 3 skipped</text:p><text:p text:style-name="B">p95 latency 41 ms</text:p></draw:text-box></draw:frame>
   </draw:page>
   <draw:page draw:name="two" draw:master-page-name="Default">
    <draw:frame svg:x="2cm" svg:y="2cm" svg:width="24cm" svg:height="3cm"><draw:text-box><text:p text:style-name="T">Next steps</text:p></draw:text-box></draw:frame>
   </draw:page>
  </office:presentation>
 </office:body>
</office:document>
XML
HOME="$tmp" soffice --headless -env:UserInstallation=file://"$tmp/profile" --convert-to pptx --outdir "$tmp" "$tmp/release-deck.fodp" >/dev/null
cp "$tmp/release-deck.pptx" release-deck.pptx
HOME="$tmp" soffice --headless -env:UserInstallation=file://"$tmp/profile" --convert-to pdf --outdir "$tmp" "$tmp/release-deck.fodp" >/dev/null
cp "$tmp/release-deck.pdf" release-deck.pdf
/usr/bin/python3 - <<'PY'
import struct, zlib
w, h = 320, 180
bars = [62, 88, 74, 110, 96, 132, 121, 150]
def pixel(x, y):
    t = x / w
    r, g, b = int(29 + (14 - 29) * t), int(78 + (116 - 78) * t), int(216 + (144 - 216) * t)
    slot = (x - 24) // 34
    if 0 <= slot < len(bars) and (x - 24) % 34 < 22 and y >= h - 16 - bars[slot]:
        return (230, 240, 255) if y < h - 16 - bars[slot] + 6 else (168, 196, 248)
    if y == h - 16 and 16 <= x < w - 16:
        return (230, 240, 255)
    return (r, g, b)
rows = b''.join(b'\0' + b''.join(bytes(pixel(x, y)) for x in range(w)) for y in range(h))
def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(rows, 9)) + chunk(b'IEND', b'')
open('cover.png', 'wb').write(png)
PY
