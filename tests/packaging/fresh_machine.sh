#!/usr/bin/env bash
# The README's two commands on a machine that has nothing: a clean, minimal Debian root (debootstrap) gets a clone
# of this checkout's HEAD, then
#   full (default): ./test.sh (which installs its own packages), then ./run.sh under Xvfb: the window must open,
#                   and a screenshot of the X screen is saved;
#   --quick:        scripts/deps.sh build, configure as ./run.sh does, and check that the GUI target `batchfit`
#                   exists and that every package `scripts/deps.sh test` names can be installed (what .ci/run runs).
#
#   tests/packaging/fresh_machine.sh [--quick] bookworm|trixie [OUT_DIR]
#
# OUT_DIR (default build-fresh/SUITE) receives the logs, timings.txt and, in full mode, run-window.png.
# Needs root (debootstrap, chroot, mount) and Debian's archive. The first call per suite runs debootstrap
# (~3 min) and keeps a tarball in $BATCHFIT_ROOT_CACHE (default /var/cache/batchfit-fresh); later calls unpack it.
# Environment: KEEP=1 keeps the root; SCREEN=WxH (default 1600x1000) is the Xvfb screen for ./run.sh;
# SKIP_TEST=1 (full mode) goes straight to ./run.sh.
# Exit: 0 passed, 1 a check failed, 2 usage, 77 skipped (not root).
set -uo pipefail

quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
suite=${1:-}
case "$suite" in bookworm|trixie) ;; *) sed -n '2,16p' "$0"; exit 2;; esac
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$src/build-fresh/$suite}
mkdir -p "$out" && out=$(cd "$out" && pwd)
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (debootstrap, chroot, mount)"; exit 77; fi

cache=${BATCHFIT_ROOT_CACHE:-/var/cache/batchfit-fresh}
mirror=${DEBIAN_MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)}
mirror=${mirror:-$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)}
mirror=${mirror:-http://deb.debian.org/debian}
screen=${SCREEN:-1600x1000}
: > "$out/timings.txt"
failures=0
ok()  { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; failures=$((failures + 1)); }
stamp() { date +%s; }
timed() { # timed NAME CMD...: runs CMD, appends "NAME: N s (exit E)" to timings.txt, returns CMD's exit code
    local name=$1 t0 rc
    shift
    t0=$(stamp)
    "$@"
    rc=$?
    echo "$name: $(($(stamp) - t0)) s (exit $rc)" | tee -a "$out/timings.txt"
    return $rc
}

root=$(mktemp -d "${TMPDIR:-/tmp}/batchfit-$suite.XXXXXX")
mounts=()
cleanup() {
    local m
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null; done
    if [ "${KEEP:-0}" = 1 ]; then echo "root kept: $root"; else rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT

# 1. A clean root.
make_root() {
    mkdir -p "$cache"
    local tar=$cache/$suite.tar
    if [ ! -s "$tar" ]; then
        command -v debootstrap >/dev/null ||
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null || return 1
        local tmp
        tmp=$(mktemp -d)
        debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >"$out/debootstrap.log" 2>&1 || return 1
        tar -C "$tmp" -cf "$tar.part" . && mv "$tar.part" "$tar"
        rm -rf --one-file-system "$tmp"
    fi
    tar -C "$root" -xf "$tar" && cp /etc/resolv.conf "$root/etc/resolv.conf"
}
timed "clean $suite root" make_root || { bad "could not make a $suite root (see $out/debootstrap.log)"; exit 1; }
. "$root/etc/os-release"
ok "a clean root: $PRETTY_NAME, $(chroot "$root" dpkg-query -W -f='.\n' | wc -l) packages, no compiler: $(
    chroot "$root" sh -c 'command -v c++ || echo none')"
for d in proc sys dev dev/shm; do
    mkdir -p "$root/$d"
    if [ "$d" = proc ]; then mount -t proc proc "$root/proc"; else mount --bind "/$d" "$root/$d"; fi
    mounts+=("$root/$d")
done

# 2. A clone of this checkout's HEAD (what CI would get), not the working tree.
git clone -q --no-hardlinks "$src" "$root/src" || { bad "git clone $src"; exit 1; }
ok "cloned $(git -C "$src" rev-parse --short HEAD) into the root"
in_root() { # in_root LOG CMD: runs CMD with bash in /src, as root, with a clean environment; output to LOG
    local log=$1
    shift
    chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 TERM=dumb ${EXTRA_ENV:-} bash -c "cd /src && $*" >"$log" 2>&1 </dev/null
}

if [ $quick = 1 ]; then
    if timed "scripts/deps.sh build" in_root "$out/deps-build.log" scripts/deps.sh build; then
        ok "scripts/deps.sh build installed what the build needs"
    else
        tail -20 "$out/deps-build.log"; bad "scripts/deps.sh build"
    fi
    # Configure exactly as ./run.sh does.
    conf=$(grep -o 'cmake -S \. -B build .*>/dev/null' "$src/run.sh" | sed 's/ *>\/dev\/null$//')
    if timed "configure ($conf)" in_root "$out/configure.log" "$conf"; then
        ok "configured as ./run.sh does"
    else
        tail -30 "$out/configure.log"; bad "configure: $conf"
    fi
    in_root "$out/targets.log" cmake --build build --target help
    for t in batchfit batchfit-cli batchfit_ui; do
        if grep -qE "^$t(:|$| )" "$out/targets.log"; then ok "target $t exists"; else bad "no target $t"; fi
    done
    grep -q 'ONNX import enabled' "$out/configure.log" && ok "ONNX import is built" || bad "ONNX import is not built"
    pkgs=$("$src/scripts/deps.sh" --list test)
    if in_root "$out/test-packages.log" "apt-get install --simulate --no-install-recommends $pkgs"; then
        ok "every package scripts/deps.sh test names is installable on $suite"
    else
        grep -E '^E:' "$out/test-packages.log" | head -5; bad "scripts/deps.sh test names a package $suite lacks"
    fi
else
    if [ "${SKIP_TEST:-0}" = 1 ]; then
        echo "SKIP_TEST=1: ./test.sh not run"
    elif timed "./test.sh" in_root "$out/test.log" ./test.sh; then
        ok "./test.sh passed: $(grep -E 'tests passed|count check' "$out/test.log" | tr '\n' ' ')"
    else
        tail -40 "$out/test.log"; bad "./test.sh"
    fi
    # ./run.sh under Xvfb, as a user with a display would start it (installs Xvfb + the tools to look at it).
    in_root "$out/x-tools.log" "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        xvfb xauth x11-utils x11-apps netpbm >/dev/null"
    # Xvfb picks a free display itself (-displayfd): the root shares the host's sockets.
    rm -f "$root/tmp/xvfb.display"
    in_root "$out/xvfb.log" "Xvfb -displayfd 3 -screen 0 ${screen}x24 -nolisten tcp 3>/tmp/xvfb.display &
        echo \$! > /tmp/xvfb.pid" &
    for _ in $(seq 1 50); do [ -s "$root/tmp/xvfb.display" ] && break; sleep 0.2; done
    display=:$(head -1 "$root/tmp/xvfb.display" 2>/dev/null)
    [ "$display" != : ] || { tail -5 "$out/xvfb.log"; bad "Xvfb did not start"; }
    t0=$(stamp)
    # run.sh ends by exec'ing the app, so the PID written here becomes the app's.
    EXTRA_ENV="DISPLAY=$display" in_root "$out/run.log" './run.sh & echo $! > /tmp/run.pid; wait' &
    runner=$!
    window=
    for _ in $(seq 1 1200); do
        window=$(chroot "$root" env DISPLAY=$display xwininfo -root -tree 2>/dev/null | grep -E '"[^"]*BatchFit"' | head -1)
        [ -n "$window" ] && break
        kill -0 $runner 2>/dev/null || break
        sleep 1
    done
    if [ -n "$window" ]; then
        echo "./run.sh to the window on screen: $(($(stamp) - t0)) s" | tee -a "$out/timings.txt"
        sleep 4 # the first estimate
        ok "./run.sh opened the window: $(sed 's/^ *//' <<<"$window")"
        chroot "$root" sh -c "DISPLAY=$display xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng" >"$out/run-window.png"
        [ -s "$out/run-window.png" ] && ok "screenshot: $out/run-window.png" || bad "no screenshot"
        if grep -q 'cannot draw SVG icons' "$out/run.log"; then bad "the app's icons are blank: $(grep 'SVG icons' "$out/run.log")"
        else ok "the app draws its SVG icons"; fi
    else
        tail -30 "$out/run.log"; bad "./run.sh opened no window"
    fi
    for f in run xvfb; do [ -s "$root/tmp/$f.pid" ] && kill "$(cat "$root/tmp/$f.pid")" 2>/dev/null; done
    wait $runner 2>/dev/null
fi

echo
if [ $failures -eq 0 ]; then echo "PASS: fresh $suite ($( [ $quick = 1 ] && echo quick || echo full))"; exit 0; fi
echo "FAILED: $failures check(s) on fresh $suite"
exit 1
