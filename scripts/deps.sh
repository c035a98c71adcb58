#!/usr/bin/env bash
# Installs what BatchFit needs from Debian 12 / Ubuntu 24.04 packages, if missing.
# Usage: scripts/deps.sh build|test     (sourced or run)
set -euo pipefail
kind=${1:-build}
pkgs=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev catch2
      qt6-base-dev qt6-charts-dev qt6-svg-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
      libgl1-mesa-dev fonts-noto-cjk)
# ./test.sh's AddressSanitizer + UBSan stage needs nothing more: g++ (build-essential) depends on libgcc-12-dev
# (Debian 12) / libgcc-13-dev (Ubuntu 24.04), which bring libasan8, libubsan1 and liblsan0.
if [ "$kind" = test ]; then
  pkgs+=(poppler-utils xvfb xauth python3-torch python3-torchvision python3-jsonschema)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" = 0 ]; then
  echo "Installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  echo "Installing with sudo: ${missing[*]}"
  sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "BatchFit needs these packages. Please run:" >&2
  echo "  sudo apt-get update && sudo $line" >&2
  exit 1
fi
