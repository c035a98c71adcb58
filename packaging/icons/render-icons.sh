#!/bin/sh
# Renders the committed hicolor PNGs from the SVG sources (needs rsvg-convert: apt-get install librsvg2-bin).
# 16 and 32 px come from the pixel-aligned variants in src/, 48-256 px from the scalable icon.
set -eu
cd "$(dirname "$0")"
id=io.github.batchfit.BatchFit
for size in 16 32 48 64 128 256; do
  case $size in
    16) src=src/icon-16.svg ;;
    32) src=src/icon-32.svg ;;
    *) src=$id.svg ;;
  esac
  mkdir -p "hicolor/${size}x${size}/apps"
  rsvg-convert -w "$size" -h "$size" -o "hicolor/${size}x${size}/apps/$id.png" "$src"
done
