#!/bin/bash
# Makes a Debian 13 (trixie) root with PyTorch 2.6 and torchvision 0.21 from Debian's archive, for
# tests/torch/torch2_quick.sh (about 5 minutes and 3 GB once).
#   scripts/torch2-root.sh DIR [MIRROR]
# Needs root and debootstrap (installed if missing).
set -euo pipefail
dir=${1:?usage: scripts/torch2-root.sh DIR [MIRROR]}
mirror=${2:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "torch2-root.sh: needs root (debootstrap, chroot)" >&2; exit 77; }
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
if [ ! -x "$dir/usr/bin/apt-get" ]; then
  debootstrap --variant=minbase trixie "$dir" "$mirror"
fi
here=$(cd "$(dirname "$0")" && pwd)
cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
"$here/in-root.sh" "$dir" -- 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  --no-install-recommends python3-torch python3-torchvision >/dev/null && python3 -c "import torch; print(torch.__version__)"'
