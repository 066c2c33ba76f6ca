#!/usr/bin/env bash
# The Debian packages the tests use: LibreOffice (writer for .doc/.odt/.rtf, calc for
# .xlsx/.xls/.ods/.csv, impress for .pptx/.ppt/.odp) and Tesseract (OCR), the same ones the
# parser image installs, prometheus for promtool (the chart's alert tests), and chromium for the
# console's browser tests (tests/console, Playwright drives it: no browser download). Installed where the machine allows it (Debian, as root); elsewhere
# this says what is missing, and the tests that need it skip, naming the package.
set -uo pipefail
PACKAGES=(libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui tesseract-ocr prometheus chromium)

if ! command -v dpkg >/dev/null 2>&1; then
  echo "system-packages: not a Debian system; tests needing ${PACKAGES[*]} will skip" >&2
  exit 0
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-packages: missing ${missing[*]} (install them as root); their tests will skip" >&2
  exit 0
fi
echo "system-packages: installing ${missing[*]}" >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  "${missing[@]}" >/dev/null; }; then
  echo "system-packages: could not install ${missing[*]}; their tests will skip" >&2
fi
exit 0
