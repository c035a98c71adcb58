#!/bin/bash
# Runs a command inside a Debian root (chroot) with /proc, /sys, /dev and the given directories bound in.
#   scripts/in-root.sh ROOT [-b SRC:DST]... -- COMMAND...
# Needs root. Used by tests/torch/torch2_quick.sh (torch 2.6 in a Debian 13 root: scripts/torch2-root.sh).
set -euo pipefail
root=${1:?usage: scripts/in-root.sh ROOT [-b SRC:DST]... -- COMMAND}
shift
[ -d "$root/etc" ] || { echo "in-root.sh: $root is not a Debian root (make one: scripts/torch2-root.sh $root)" >&2; exit 2; }
binds=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  [ "$1" = -b ] || { echo "in-root.sh: expected -b SRC:DST or --, got $1" >&2; exit 2; }
  binds+=("$2"); shift 2
done
[ "${1:-}" = -- ] && shift
mounts=()
cleanup() { for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done; }
trap cleanup EXIT
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
for d in sys dev dev/shm; do mount --bind "/$d" "$root/$d" && mounts+=("$root/$d"); done
for b in "${binds[@]}"; do
  src=${b%%:*} dst=${b#*:}
  mkdir -p "$root$dst" && mount --bind "$src" "$root$dst" && mounts+=("$root$dst")
done
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  TERM=dumb LANG=C.UTF-8 USE_LIBUV=0 bash -lc "$*"
