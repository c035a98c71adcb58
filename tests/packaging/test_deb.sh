#!/usr/bin/env bash
# Packaging test (GitHub issue 6): builds the .deb (and the .tar.gz) from a configured build directory, unpacks
# the .deb into a scratch root with `dpkg -x` and checks it:
#   - control fields: name, version (= project version), section, Depends from dpkg-shlibdeps, all resolvable;
#   - the file list: everything under /usr, owned by root, sane permissions, no build paths in RUNPATHs, every
#     shared library found;
#   - every file the .desktop and AppStream metainfo files name is where they say (Exec, Icon in hicolor at each
#     size with the right pixel size, launchable, provided binaries), and both files validate;
#   - the man page exists and has the same words as the installed `batchfit-cli --help`;
#   - the installed programs run: `batchfit-cli --version` (and `batchfit --version`), an estimate and a
#     headless report from the installed preset files (the report only if this batchfit-cli supports it),
#     the desktop entry's Exec line starts the app (offscreen);
#   - `dpkg --root` installs and purges it in a scratch root without leftovers;
#   - the .tar.gz has the same files and runs from wherever it is unpacked.
#
# Usage: tests/packaging/test_deb.sh BUILD_DIR     (configured with -DCMAKE_INSTALL_PREFIX=/usr; built or not)
# Exit: 0 all checks passed, 1 a check failed, 2 usage, 77 skipped (no dpkg-deb). KEEP=1 keeps the scratch dir.
set -uo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/CMakeCache.txt" ]; then
  echo "usage: $0 BUILD_DIR   (a configured CMake build directory)" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)

for tool in dpkg-deb dpkg cpack; do
  if ! command -v $tool >/dev/null; then
    echo "SKIP: $tool not found (this test needs a Debian-like system)"
    exit 77
  fi
done

failures=0
ok()   { echo "ok   - $*"; }
bad()  { echo "FAIL - $*"; failures=$((failures + 1)); }
skip() { echo "skip - $*"; }
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
check_quiet() { # check_quiet DESCRIPTION COMMAND...: like check, shows the command's output only when it fails
  local what=$1 out; shift
  if out=$("$@" 2>&1); then ok "$what"; else bad "$what"; sed 's/^/#   /' <<<"$out"; fi
}

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/batchfit-pkgtest.XXXXXX")
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "scratch kept: $SCRATCH"; else rm -rf "$SCRATCH"; fi; }
trap cleanup EXIT

# --- build and package ---------------------------------------------------------------------------------------------
if [ ! -f "$BUILD/packaging/expect.sh" ] || [ ! -f "$BUILD/CPackConfig.cmake" ]; then
  bad "$BUILD has no packaging/expect.sh or CPackConfig.cmake (packaging/ not configured)"
  exit 1
fi
# BATCHFIT_VERSION, BATCHFIT_APP_ID, BATCHFIT_BUILD_UI, BATCHFIT_HAVE_GUI, BATCHFIT_HAVE_GPUS, BATCHFIT_PRESET_FILES,
# BATCHFIT_DEB_NAME: written by packaging/CMakeLists.txt at configure time
. "$BUILD/packaging/expect.sh"
# Only what the package holds (the test programs are not installed, and may be mid-change).
targets="batchfit-cli batchfit_packaging_files"
[ "$BATCHFIT_HAVE_GUI" = 1 ] && targets="$targets batchfit"
echo "# building $targets in $BUILD"
if ! cmake --build "$BUILD" --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" --target $targets > "$SCRATCH/build.log" 2>&1; then
  tail -40 "$SCRATCH/build.log"
  bad "cmake --build $BUILD --target $targets"
  exit 1
fi
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$BUILD/CMakeCache.txt")
[ "$prefix" = /usr ] || echo "# note: CMAKE_INSTALL_PREFIX is '$prefix'; the .deb installs under /usr regardless"

echo "# cpack -G DEB / TGZ"
mkdir -p "$SCRATCH/cpack"
for gen in DEB TGZ; do
  if ! (cd "$BUILD" && cpack -G $gen -B "$SCRATCH/cpack" --config "$BUILD/CPackConfig.cmake") \
      > "$SCRATCH/cpack-$gen.log" 2>&1; then
    tail -40 "$SCRATCH/cpack-$gen.log"
    bad "cpack -G $gen"
    exit 1
  fi
done
shopt -s nullglob
debs=("$SCRATCH"/cpack/*.deb)
tgzs=("$SCRATCH"/cpack/*.tar.gz)
shopt -u nullglob
if [ ${#debs[@]} -ne 1 ] || [ ${#tgzs[@]} -ne 1 ]; then
  bad "cpack made exactly one .deb and one .tar.gz (got: ${debs[*]:-none} ${tgzs[*]:-none})"
  exit 1
fi
DEB=${debs[0]}
TGZ=${tgzs[0]}
arch=$(dpkg --print-architecture)
check "the .deb is named ${BATCHFIT_DEB_NAME}_${BATCHFIT_VERSION}_${arch}.deb ($(basename "$DEB"))" \
  test "$(basename "$DEB")" = "${BATCHFIT_DEB_NAME}_${BATCHFIT_VERSION}_${arch}.deb"

# --- control fields --------------------------------------------------------------------------------------------------
field() { dpkg-deb -f "$DEB" "$1"; }
echo "# control:"; dpkg-deb -f "$DEB" | sed 's/^/#   /'
check "Package: $BATCHFIT_DEB_NAME" test "$(field Package)" = "$BATCHFIT_DEB_NAME"
check "Version: $BATCHFIT_VERSION (the project version)" test "$(field Version)" = "$BATCHFIT_VERSION"
check "Architecture: $arch" test "$(field Architecture)" = "$arch"
check "Section: science" test "$(field Section)" = science
check "Maintainer set" test -n "$(field Maintainer)"
check "Homepage set" test -n "$(field Homepage)"
check "Description has a synopsis and a long text" test "$(field Description | wc -l)" -ge 3
depends=$(field Depends)
dep_names=$(printf '%s\n' "$depends" | tr ',' '\n' | sed 's/^ *//; s/ .*//; s/|.*//' | grep -v '^$' | sort -u)
expected="libc6 libstdc++6 libgcc-s1"
if [ "$BATCHFIT_HAVE_GUI" = 1 ]; then expected="$expected libqt6core6 libqt6gui6 libqt6widgets6 libqt6svg6"; fi
for pkg in $expected; do
  check "Depends has $pkg" grep -qx "$pkg" <<<"$dep_names"
done
check "Depends has version constraints from shlibdeps" grep -q '(>= ' <<<"$depends"
if [ "${BATCHFIT_HAVE_ONNX:-0}" = 1 ]; then  # the programs link libonnx and libprotobuf: the package needs them
  check "Depends has libonnx (ONNX import is built)" grep -q '^libonnx' <<<"$dep_names"
  check "Depends has libprotobuf (ONNX import is built)" grep -q '^libprotobuf' <<<"$dep_names"
fi
if command -v apt-cache >/dev/null && [ -n "$(apt-cache policy libc6 2>/dev/null | sed -n 's/^ *Candidate: //p')" ]; then
  for pkg in $dep_names; do
    cand=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
    check "dependency $pkg is in this system's archive ($cand)" test -n "$cand" -a "$cand" != "(none)"
  done
else
  skip "dependencies against the archive (no apt lists here)"
fi

# --- file list -----------------------------------------------------------------------------------------------------
dpkg-deb -c "$DEB" > "$SCRATCH/contents.txt"
check "every entry is under /usr" test -z "$(awk '{print $6}' "$SCRATCH/contents.txt" | grep -v -e '^\./$' -e '^\./usr/' -e '^\./usr$')"
check "nothing under /usr/local" test -z "$(awk '{print $6}' "$SCRATCH/contents.txt" | grep '^\./usr/local')"
check "every entry is owned by root/root" test -z "$(awk '$2 != "root/root"' "$SCRATCH/contents.txt")"
check "files are 0644 or 0755, directories 0755" \
  test -z "$(awk '$1 !~ /^(-rw-r--r--|-rwxr-xr-x|drwxr-xr-x)$/' "$SCRATCH/contents.txt")"

ROOT=$SCRATCH/root
dpkg -x "$DEB" "$ROOT"
U=$ROOT/usr
exists() { test -f "$1"; }
execfile() { test -f "$1" -a -x "$1"; }
check "/usr/bin/batchfit-cli installed, executable" execfile "$U/bin/batchfit-cli"
for p in $BATCHFIT_PRESET_FILES; do
  check "preset /usr/share/batchfit/presets/$p" exists "$U/share/batchfit/presets/$p"
done
if [ "$BATCHFIT_HAVE_GPUS" = 1 ]; then
  check "GPU catalogue /usr/share/batchfit/gpus.json" exists "$U/share/batchfit/gpus.json"
else
  skip "GPU catalogue (resources/gpus.json does not exist in this tree)"
fi
check "licence /usr/share/doc/batchfit/copyright" exists "$U/share/doc/batchfit/copyright"
check "man page /usr/share/man/man1/batchfit-cli.1.gz" exists "$U/share/man/man1/batchfit-cli.1.gz"
qms=$(find "$U/share/batchfit" -name '*.qm' 2>/dev/null | wc -l)
if [ "$qms" -gt 0 ]; then ok "$qms translation(s) in /usr/share/batchfit/translations"
else skip "translations: no .qm files installed (none built into the translations dir, or embedded in the app)"; fi

for elf in "$U"/bin/*; do
  name=${elf#"$ROOT"}
  if ldd "$elf" 2>&1 | grep -q 'not found'; then bad "$name: shared libraries not found: $(ldd "$elf" | grep 'not found' | tr -s ' \n' ' ')"
  else ok "$name: every shared library found"; fi
  runpath=$(readelf -d "$elf" 2>/dev/null | grep -E 'RPATH|RUNPATH' || true)
  check "$name: no RPATH/RUNPATH into the build tree" test -z "$(grep -F -e "$BUILD" -e "$SRC" <<<"$runpath")"
done

# --- desktop entry and metainfo ------------------------------------------------------------------------------------
png_size() { # prints WIDTHxHEIGHT of a PNG from its IHDR
  local b; b=($(od -An -tu1 -j16 -N8 "$1"))
  echo "$(( (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3] ))x$(( (b[4] << 24) | (b[5] << 16) | (b[6] << 8) | b[7] ))"
}
desktop=$U/share/applications/$BATCHFIT_APP_ID.desktop
metainfo=$U/share/metainfo/$BATCHFIT_APP_ID.metainfo.xml
if [ "$BATCHFIT_HAVE_GUI" != 1 ]; then
  if [ "$BATCHFIT_BUILD_UI" = 1 ]; then
    bad "BATCHFIT_BUILD_UI is ON but there is no desktop app target (batchfit): no GUI, .desktop file, metainfo or icons"
  else
    skip "desktop app, .desktop file, metainfo, icons: configured with BATCHFIT_BUILD_UI=OFF (a CLI-only package)"
  fi
  check "no .desktop file or metainfo without the app" test ! -e "$desktop" -a ! -e "$metainfo"
else
  check "/usr/bin/batchfit installed, executable" execfile "$U/bin/batchfit"
  check "man page /usr/share/man/man1/batchfit.1.gz" exists "$U/share/man/man1/batchfit.1.gz"
  check "desktop entry /usr/share/applications/$BATCHFIT_APP_ID.desktop" exists "$desktop"
  check "metainfo /usr/share/metainfo/$BATCHFIT_APP_ID.metainfo.xml" exists "$metainfo"
  if command -v desktop-file-validate >/dev/null; then
    check_quiet "desktop-file-validate" desktop-file-validate "$desktop"
  else skip "desktop-file-validate not installed (apt-get install desktop-file-utils)"; fi
  if command -v appstreamcli >/dev/null; then
    check_quiet "appstreamcli validate --no-net" appstreamcli validate --no-net "$metainfo"
  else skip "appstreamcli not installed (apt-get install appstream)"; fi

  key() { sed -n "s/^$1=//p" "$desktop" | head -1; }
  exec_line=$(key Exec)
  exec_bin=${exec_line%% *}
  check "Exec=$exec_line: $exec_bin is a program name, in /usr/bin" \
    execfile "$U/bin/$exec_bin"
  tryexec=$(key TryExec)
  if [ -n "$tryexec" ]; then check "TryExec=$tryexec in /usr/bin" execfile "$U/bin/${tryexec##*/}"; fi
  icon=$(key Icon)
  check "Icon=$icon is the app id" test "$icon" = "$BATCHFIT_APP_ID"
  check "icon /usr/share/icons/hicolor/scalable/apps/$icon.svg" exists "$U/share/icons/hicolor/scalable/apps/$icon.svg"
  for s in 16 32 48 64 128 256; do
    png=$U/share/icons/hicolor/${s}x${s}/apps/$icon.png
    if [ -f "$png" ]; then check "icon ${s}x${s}/apps/$icon.png is ${s}x${s} px" test "$(png_size "$png")" = "${s}x${s}"
    else bad "icon /usr/share/icons/hicolor/${s}x${s}/apps/$icon.png missing"; fi
  done
  check "Categories=Science;Education;" test "$(key Categories)" = "Science;Education;"
  check "Name[zh_CN] and Comment[zh_CN]" test -n "$(key 'Name\[zh_CN\]')" -a -n "$(key 'Comment\[zh_CN\]')"

  xml() { tr -d '\n' < "$metainfo" | grep -o "$1" | sed 's/<[^>]*>//g'; }
  check "metainfo <id> is $BATCHFIT_APP_ID, the file's name" test "$(xml '<id>[^<]*</id>')" = "$BATCHFIT_APP_ID"
  launchable=$(xml '<launchable type="desktop-id">[^<]*</launchable>')
  check "metainfo launchable $launchable is /usr/share/applications/$launchable" exists "$U/share/applications/$launchable"
  for b in $(xml '<binary>[^<]*</binary>'); do
    check "metainfo provides binary $b: /usr/bin/$b" execfile "$U/bin/$b"
  done
  check "metainfo <release version> is $BATCHFIT_VERSION" \
    grep -q "<release version=\"$BATCHFIT_VERSION\"" "$metainfo"
  check "metainfo categories match the desktop entry" \
    test "$(xml '<category>[^<]*</category>' | tr '\n' ';')" = "$(key Categories)"
fi

# --- the installed programs ----------------------------------------------------------------------------------------
export QT_QPA_PLATFORM=offscreen LC_ALL=C.UTF-8 XDG_RUNTIME_DIR=$SCRATCH/runtime HOME=$SCRATCH/home
mkdir -p -m 0700 "$XDG_RUNTIME_DIR" "$HOME"
CLI=$U/bin/batchfit-cli
v=$("$CLI" --version 2>&1)
check "installed batchfit-cli --version prints 'batchfit-cli $BATCHFIT_VERSION' (got '$v')" \
  test "$v" = "batchfit-cli $BATCHFIT_VERSION"
if [ "$BATCHFIT_HAVE_GUI" = 1 ]; then
  gv=$(timeout 20 "$U/bin/batchfit" --version 2>/dev/null)
  check "installed batchfit --version prints $BATCHFIT_VERSION (got '$gv')" grep -qw -- "$BATCHFIT_VERSION" <<<"$gv"
fi

# man page = --help: the same words (groff renders the man page; hyphenation off, one very long line per paragraph).
"$CLI" --help > "$SCRATCH/help.txt" 2>&1
if command -v groff >/dev/null; then
  zcat "$U/share/man/man1/batchfit-cli.1.gz" | groff -man -Tascii -rLL=2000n -rHY=0 -P-c 2>/dev/null | col -b \
    > "$SCRATCH/man.txt"
  words() { tr -s '[:space:]' '\n' | grep -v '^$' | sort -u; }
  # --help's headings become man sections (Commands: -> COMMANDS, Exit codes: -> EXIT STATUS, Usage: -> SYNOPSIS)
  # and its `quotes` bold text; every other word must be in the man page as it is.
  missing=$(comm -23 <(sed -e '/^[^ ].*:$/d' -e 's/^Usage: //' -e 's/`//g' "$SCRATCH/help.txt" | words) \
                     <(words < "$SCRATCH/man.txt") | tr '\n' ' ')
  check "every word of the installed --help is in the man page${missing:+ (missing: $missing)}" test -z "$missing"
  check "the man page renders its OPTIONS and EXIT STATUS" grep -q '^EXIT STATUS' "$SCRATCH/man.txt"
else
  skip "man page vs --help (no groff)"
fi

# an estimate from the installed files
preset=$U/share/batchfit/presets/resnet50.json
[ -f "$preset" ] || preset=$(ls "$U"/share/batchfit/presets/*.json | head -1)
for p in "$U"/share/batchfit/presets/*.json; do
  check "batchfit-cli check --model ${p#"$ROOT"}" "$CLI" check --model "$p" > /dev/null
done
if "$CLI" estimate --model "$preset" --batch 8 --gpu 24GiB --json > "$SCRATCH/estimate.json" 2> "$SCRATCH/estimate.err"; then
  check "estimate --json from ${preset#"$ROOT"} names version $BATCHFIT_VERSION" \
    grep -q "\"batchfit_version\": *\"$BATCHFIT_VERSION\"" "$SCRATCH/estimate.json"
else
  bad "batchfit-cli estimate --model ${preset#"$ROOT"} --batch 8 --gpu 24GiB --json: $(cat "$SCRATCH/estimate.err")"
fi

# the headless report, if this batchfit-cli has one (a build without Qt answers exit code 4)
"$CLI" report --model "$preset" --batch 8 --gpu 24GiB --out "$SCRATCH/report.pdf" > "$SCRATCH/report.log" 2>&1
rc=$?
if [ $rc -eq 4 ] && grep -qi 'without Qt\|not built\|not supported' "$SCRATCH/report.log"; then
  skip "headless report: this batchfit-cli has no report support ($(head -1 "$SCRATCH/report.log"))"
elif [ $rc -ne 0 ]; then
  bad "batchfit-cli report --out report.pdf exit $rc: $(head -3 "$SCRATCH/report.log")"
else
  check "headless report: report.pdf is a PDF" test "$(head -c 5 "$SCRATCH/report.pdf")" = "%PDF-"
  if "$CLI" report --model "$preset" --batch 8 --gpu 24GiB --lang zh_CN --out "$SCRATCH/report.png" \
       > "$SCRATCH/report-png.log" 2>&1; then
    check "headless report: report.png (zh_CN) is a PNG" \
      test "$(od -An -tx1 -N8 "$SCRATCH/report.png" | tr -d ' ')" = 89504e470d0a1a0a
  else
    bad "batchfit-cli report --lang zh_CN --out report.png: $(head -3 "$SCRATCH/report-png.log")"
  fi
fi

# the menu entry: run its Exec line as a launcher would (PATH has the scratch /usr/bin), offscreen
if [ "$BATCHFIT_HAVE_GUI" = 1 ] && [ -n "${exec_line:-}" ]; then
  launch=$(sed 's/ *%[fFuUick]//g' <<<"$exec_line")
  (cd "$SCRATCH" && PATH="$U/bin:$PATH" exec $launch) > "$SCRATCH/gui.log" 2>&1 &
  gui_pid=$!
  sleep 5
  if kill -0 $gui_pid 2>/dev/null; then
    ok "the desktop entry's Exec ($launch) starts the app and it is still running after 5 s"
    kill $gui_pid 2>/dev/null; wait $gui_pid 2>/dev/null
  else
    wait $gui_pid; rc=$?
    bad "the desktop entry's Exec ($launch) exited within 5 s (exit $rc): $(head -5 "$SCRATCH/gui.log")"
  fi
fi

# --- install and purge with dpkg in a scratch root -----------------------------------------------------------------
SYS=$SCRATCH/sysroot
mkdir -p "$SYS/var/lib/dpkg/info" "$SYS/var/lib/dpkg/updates" "$SYS/var/lib/dpkg/triggers"
: > "$SYS/var/lib/dpkg/status"
dpkg_root() { dpkg --root="$SYS" --log=/dev/null --force-depends --force-not-root --force-script-chrootless "$@"; }
if dpkg_root -i "$DEB" > "$SCRATCH/dpkg-i.log" 2>&1; then
  ok "dpkg --root -i installs it"
  check "dpkg lists it as installed" test "$(dpkg-query --admindir="$SYS/var/lib/dpkg" -W -f '${Status}' "$BATCHFIT_DEB_NAME")" = "install ok installed"
  check "dpkg tracks every file in the package" \
    test "$(dpkg-query --admindir="$SYS/var/lib/dpkg" -L "$BATCHFIT_DEB_NAME" | wc -l)" -ge "$(grep -c -v '/$' "$SCRATCH/contents.txt")"
  if dpkg_root --purge "$BATCHFIT_DEB_NAME" > "$SCRATCH/dpkg-r.log" 2>&1; then
    left=$(cd "$SYS" && find . -mindepth 1 ! -path './var' ! -path './var/lib' ! -path './var/lib/dpkg' ! -path './var/lib/dpkg/*')
    check "dpkg --purge removes it without leftovers${left:+ (left: $(tr '\n' ' ' <<<"$left"))}" test -z "$left"
  else
    bad "dpkg --root --purge: $(tail -5 "$SCRATCH/dpkg-r.log")"
  fi
else
  bad "dpkg --root -i: $(tail -5 "$SCRATCH/dpkg-i.log")"
fi

# --- the relocatable .tar.gz ---------------------------------------------------------------------------------------
mkdir -p "$SCRATCH/tgz/some where"
tar -xzf "$TGZ" -C "$SCRATCH/tgz/some where"
top=$(ls "$SCRATCH/tgz/some where")
T="$SCRATCH/tgz/some where/$top"
diff <(awk '{print $6}' "$SCRATCH/contents.txt" | grep -v '/$' | sed 's|^\./usr/||' | sort) \
     <(cd "$T" && find . -type f | sed 's|^\./||' | sort) > "$SCRATCH/tgz.diff"
check "the .tar.gz ($(basename "$TGZ")) holds the same files as the .deb, under $top/" test ! -s "$SCRATCH/tgz.diff"
check "the .tar.gz's bin/batchfit-cli runs from a moved directory" \
  test "$("$T/bin/batchfit-cli" --version 2>&1)" = "batchfit-cli $BATCHFIT_VERSION"
check "the .tar.gz has no absolute paths into the build tree" \
  test -z "$(grep -rlF "$BUILD" "$T" 2>/dev/null)"

echo
if [ $failures -eq 0 ]; then
  echo "PASS: $(basename "$DEB") and $(basename "$TGZ")"
  exit 0
fi
echo "FAILED: $failures check(s)"
exit 1
