#!/bin/sh
# Regenerates the binary fixtures from the text ones. Needs LibreOffice and
# chromium-headless-shell (scripts/install-deps.sh). Run from this directory.
set -eu
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# deck.fodp is a flat (plain XML) OpenDocument presentation with three slides.
soffice -env:UserInstallation="file://$profile" --headless --convert-to pptx deck.fodp
soffice -env:UserInstallation="file://$profile" --headless --convert-to ppt deck.fodp
# A real PDF for the passthrough test.
chromium-headless-shell --no-sandbox --disable-gpu --no-pdf-header-footer \
  --user-data-dir="$profile/chrome" --print-to-pdf=sample.pdf "file://$PWD/report.html"
cp deck.pptx ../office/warmup.pptx
# deck.pptx saved with the password "secret" (needs python3-uno).
/usr/bin/python3 encrypt-deck.py "$profile/encrypt"
