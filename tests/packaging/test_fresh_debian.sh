#!/usr/bin/env bash
# Installs a BatchFit .deb on a fresh, minimal Debian 12 (a debootstrap chroot) with apt and no recommended
# packages, starts it the way its menu entry does, runs the CLI and a headless report, then purges it and checks
# that nothing of it is left. Complements test_deb.sh, which needs neither root nor network.
#
# Usage (as root, with network to deb.debian.org):
#   tests/packaging/test_fresh_debian.sh PATH/TO/batchfit_X_amd64.deb [FRESH_ROOT]
# FRESH_ROOT: an existing `debootstrap --variant=minbase bookworm DIR` tree to copy (saves minutes per run);
# without it one is made in a scratch directory. The chroot is a copy: FRESH_ROOT itself is never changed.
# Exit: 0 passed, 1 a check failed, 2 usage, 77 skipped (not root, no debootstrap/chroot).
set -uo pipefail

if [ $# -lt 1 ] || [ ! -f "$1" ]; then
  echo "usage: $0 PACKAGE.deb [FRESH_ROOT]" >&2
  exit 2
fi
DEB=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
FRESH=${2:-}
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (chroot, mount)"; exit 77; fi
if [ -z "$FRESH" ] && ! command -v debootstrap >/dev/null; then
  echo "SKIP: no debootstrap (apt-get install debootstrap) and no FRESH_ROOT"; exit 77
fi

failures=0
ok()   { echo "ok   - $*"; }
bad()  { echo "FAIL - $*"; failures=$((failures + 1)); }
skip() { echo "skip - $*"; }

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/batchfit-fresh.XXXXXX")
R=$SCRATCH/root
cleanup() {
  umount "$R/proc" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then echo "scratch kept: $SCRATCH"; else rm -rf --one-file-system "$SCRATCH"; fi
}
trap cleanup EXIT

if [ -n "$FRESH" ]; then
  echo "# copying the fresh Debian 12 root $FRESH"
  cp -a "$FRESH" "$R"
else
  echo "# debootstrap --variant=minbase bookworm (a few minutes)"
  if ! debootstrap --variant=minbase bookworm "$R" http://deb.debian.org/debian > "$SCRATCH/debootstrap.log" 2>&1; then
    tail -20 "$SCRATCH/debootstrap.log"; echo "FAIL - debootstrap"; exit 1
  fi
fi
grep -q 'VERSION_ID="12"' "$R/etc/os-release" && ok "the chroot is Debian 12 ($(. "$R/etc/os-release"; echo "$PRETTY_NAME"))" \
  || bad "the chroot is not Debian 12"
mount -t proc proc "$R/proc"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
              DEBIAN_FRONTEND=noninteractive "$@"; }

before=$SCRATCH/files-before.txt
(cd "$R" && find . -xdev \( -path ./proc -o -path ./var/lib/apt -o -path ./var/cache -o -path ./var/log -o -path ./tmp \) -prune -o -print | sort) > "$before"

cp "$DEB" "$R/tmp/"
pkg=$(dpkg-deb -f "$DEB" Package)
version=$(dpkg-deb -f "$DEB" Version)
if in_root apt-get update > "$SCRATCH/apt-update.log" 2>&1 &&
   in_root apt-get install -y --no-install-recommends "/tmp/$(basename "$DEB")" > "$SCRATCH/apt-install.log" 2>&1; then
  ok "apt-get install --no-install-recommends ./$(basename "$DEB") on the fresh Debian 12 ($(grep -c '^Setting up' "$SCRATCH/apt-install.log") packages set up)"
else
  tail -20 "$SCRATCH/apt-install.log" "$SCRATCH/apt-update.log"
  bad "apt-get install ./$(basename "$DEB")"
  exit 1
fi
after_install=$SCRATCH/files-after-install.txt
(cd "$R" && find . -xdev \( -path ./proc -o -path ./var/lib/apt -o -path ./var/cache -o -path ./var/log -o -path ./tmp \) -prune -o -print | sort) > "$after_install"

if [ -z "$(in_root fc-list :lang=zh 2>/dev/null)" ]; then
  echo "# note: no font for Chinese here (the package only Suggests fonts-noto-cjk): zh_CN text would show boxes"
fi
v=$(in_root batchfit-cli --version 2>&1)
[ "$v" = "batchfit-cli $version" ] && ok "batchfit-cli --version: $v" || bad "batchfit-cli --version: '$v' (want 'batchfit-cli $version')"
in_root batchfit-cli estimate --preset resnet50 --batch 16 --gpu 24GiB > "$SCRATCH/estimate.txt" 2>&1 \
  && ok "batchfit-cli estimate --preset resnet50 --batch 16 --gpu 24GiB" || bad "estimate: $(head -3 "$SCRATCH/estimate.txt")"
in_root batchfit-cli check --model /usr/share/batchfit/presets/resnet50.json > /dev/null 2>&1 \
  && ok "batchfit-cli check --model /usr/share/batchfit/presets/resnet50.json" || bad "check --model the installed preset"

in_root env QT_QPA_PLATFORM=offscreen batchfit-cli report --preset resnet50 --batch 16 --gpu 24GiB --out /tmp/r.pdf \
  > "$SCRATCH/report.log" 2>&1
rc=$?
if [ $rc -eq 4 ] && grep -qi 'without Qt' "$SCRATCH/report.log"; then
  skip "headless report: this batchfit-cli has no report support"
elif [ $rc -eq 0 ] && [ "$(head -c 5 "$R/tmp/r.pdf")" = "%PDF-" ]; then
  ok "headless report (offscreen, no display): /tmp/r.pdf is a PDF"
else
  bad "batchfit-cli report exit $rc: $(head -5 "$SCRATCH/report.log")"
fi

desktop=$(ls "$R"/usr/share/applications/*.desktop 2>/dev/null | head -1)
if [ -z "$desktop" ]; then
  skip "no desktop entry in the package (CLI-only build)"
else
  gv=$(in_root env QT_QPA_PLATFORM=offscreen batchfit --version 2>/dev/null)
  grep -qw -- "$version" <<<"$gv" && ok "batchfit --version: $gv" || bad "batchfit --version: '$gv'"
  exec_line=$(sed -n 's/^Exec=//p' "$desktop" | head -1 | sed 's/ *%[fFuUick]//g')
  # The X11 platform plugin must load with only the package's dependencies: without a display it may fail only
  # for the display, not for a missing library.
  in_root env QT_QPA_PLATFORM=xcb DISPLAY=:99 timeout 10 $exec_line > "$SCRATCH/xcb.log" 2>&1
  if grep -q 'could not connect to display' "$SCRATCH/xcb.log" && ! grep -qi 'cannot open shared\|not found' "$SCRATCH/xcb.log"; then
    ok "the X11 (xcb) platform plugin loads; it fails only for want of a display"
  else
    bad "the X11 (xcb) platform plugin: $(head -5 "$SCRATCH/xcb.log" | tr '\n' ' ')"
  fi
  # As a launcher would: the Exec line, no terminal, offscreen (no display here). The shell writes its PID and
  # execs the app, so the PID is the app's.
  chroot "$R" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LC_ALL=C.UTF-8 QT_QPA_PLATFORM=offscreen \
    QT_DEBUG_PLUGINS=1 XDG_RUNTIME_DIR=/tmp /bin/sh -c "echo \$\$ > /tmp/gui.pid; exec $exec_line" > "$SCRATCH/gui.log" 2>&1 < /dev/null &
  launcher=$!
  sleep 6
  gui_pid=$(cat "$R/tmp/gui.pid" 2>/dev/null || true)
  if [ -n "$gui_pid" ] && kill -0 "$gui_pid" 2>/dev/null; then
    ok "the menu entry's Exec ($exec_line) starts the app (offscreen) and it keeps running"
    kill "$gui_pid"
  else
    bad "the menu entry's Exec ($exec_line) did not keep running: $(grep -v '^qt\.core\.' "$SCRATCH/gui.log" | head -5)"
  fi
  wait "$launcher" 2>/dev/null
  # The app's icons are SVG: the SVG icon engine must be there and load (a missing one only shows blank icons).
  if grep -q 'libqsvgicon.so" loaded library' "$SCRATCH/gui.log"; then
    ok "the app loaded Qt's SVG icon engine (its icons render)"
  else
    bad "the app did not load Qt's SVG icon engine (libqsvgicon.so): its SVG icons would be blank"
  fi
fi

if in_root apt-get purge -y "$pkg" > "$SCRATCH/apt-purge.log" 2>&1 &&
   in_root apt-get autoremove --purge -y > "$SCRATCH/apt-autoremove.log" 2>&1; then
  ok "apt-get purge $pkg && apt-get autoremove --purge"
else
  tail -10 "$SCRATCH/apt-purge.log"; bad "apt-get purge $pkg"
fi
in_root dpkg -s "$pkg" > /dev/null 2>&1 && bad "dpkg still knows $pkg" || ok "dpkg no longer knows $pkg"
after=$SCRATCH/files-after.txt
(cd "$R" && find . -xdev \( -path ./proc -o -path ./var/lib/apt -o -path ./var/cache -o -path ./var/log -o -path ./tmp \) -prune -o -print | sort) > "$after"
# What the package itself installed must be gone; caches that other packages' triggers rebuild may differ.
ours=$(comm -13 "$before" "$after" | grep -i 'batchfit' || true)
[ -z "$ours" ] && ok "no file of BatchFit is left after the purge" || bad "left after the purge: $(tr '\n' ' ' <<<"$ours")"
rest=$(comm -13 "$before" "$after" | grep -v -e '^\./var/lib/dpkg/' -e '^\./etc/ld.so.cache$' || true)
[ -z "$rest" ] && ok "the root is as before the install (apart from dpkg's own records)" \
  || echo "# note: new after install+purge+autoremove (not BatchFit's): $(tr '\n' ' ' <<<"$rest")"

echo
if [ $failures -eq 0 ]; then echo "PASS: $(basename "$DEB") on a fresh Debian 12"; exit 0; fi
echo "FAILED: $failures check(s)"
exit 1
