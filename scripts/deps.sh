#!/usr/bin/env bash
# Installs what BatchFit needs from the distribution's packages, if missing.
#   scripts/deps.sh build    what ./run.sh needs: compiler, CMake, Qt 6 (Widgets, Charts, Svg, LinguistTools),
#                            nlohmann-json, ONNX + protobuf (File > Import > ONNX), fonts for Chinese
#   scripts/deps.sh test     build + what ./test.sh needs: Catch2, Google Benchmark, Xvfb, poppler, PyTorch
#   scripts/deps.sh --list build|test   print the package list and exit (used by tests/packaging/)
# Tried on clean Debian 12 (bookworm) and Debian 13 (trixie) roots (tests/packaging/fresh_machine.sh). Ubuntu 24.04
# uses the same package names; it was not tried here.
set -euo pipefail
list_only=0
if [ "${1:-}" = --list ]; then list_only=1; shift; fi
kind=${1:-build}
case "$kind" in build|test) ;; *) echo "usage: $0 [--list] build|test" >&2; exit 2;; esac
# libqt6opengl6-dev: Qt6Charts' CMake package needs Qt6OpenGL, and on Debian 12 nothing else pulls it in.
# libonnx-dev + libprotobuf-dev (+ protobuf-compiler, which ONNXConfig.cmake's protobuf lookup wants): ONNX import.
pkgs=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev
      qt6-base-dev libqt6opengl6-dev qt6-charts-dev qt6-svg-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
      qt6-translations-l10n libgl1-mesa-dev libonnx-dev libprotobuf-dev protobuf-compiler
      fonts-noto-cjk)
# ./test.sh's AddressSanitizer + UBSan stage needs nothing more: g++ (build-essential) depends on libgcc-12-dev
# (Debian 12) / libgcc-14-dev (Debian 13), which bring libasan8, libubsan1 and liblsan0.
if [ "$kind" = test ]; then
  pkgs+=(catch2 libbenchmark-dev poppler-utils xvfb xauth python3-torch python3-torchvision python3-jsonschema
         pybind11-dev python3-dev python3-venv
         python3-onnx)
fi
# Needed where the release has them: Debian 13 moved Qt's SVG icon engine out of libqt6svg6 into qt6-svg-plugins
# (without it every icon is blank); Debian 12 has no such package.
optional=(qt6-svg-plugins)
available() { apt-cache show "$1" >/dev/null 2>&1; }
if [ $list_only = 1 ]; then
  for p in "${optional[@]}"; do available "$p" && pkgs+=("$p"); done
  echo "${pkgs[*]}"
  exit 0
fi
# A name can be virtual: on Debian 13, qt6-base-dev provides libqt6opengl6-dev. Provided names count as installed.
provided=" $(dpkg-query -W -f='${db:Status-Abbrev} ${Provides}\n' 2>/dev/null | awk '/^ii/ {$1=""; print}' |
             tr ',' '\n' | sed 's/(.*)//; s/ //g' | tr '\n' ' ') "
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in "${pkgs[@]}"; do
  installed "$p" || [[ "$provided" == *" $p "* ]] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq # before asking which optional packages exist
fi
for p in "${optional[@]}"; do
  installed "$p" || ! available "$p" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" = 0 ]; then
  echo "Installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  echo "Installing with sudo: ${missing[*]}"
  sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "BatchFit needs these packages. Please run:" >&2
  echo "  sudo apt-get update && sudo $line" >&2
  exit 1
fi
