#!/usr/bin/env bash
# cmake --install puts nbdkit-futuredisk-plugin.so in nbdkit's plugin
# directory (staged with DESTDIR), with both man pages, and that .so loads.
# Usage: test-install.sh BUILD_DIR PLUGINDIR
set -euo pipefail
build=$1 plugindir=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
DESTDIR=$stage cmake --install "$build" >/dev/null
so=$stage$plugindir/nbdkit-futuredisk-plugin.so
test -f "$so" || { echo "not installed: $so"; exit 1; }
find "$stage" -name nbdkit-futuredisk-plugin.1 | grep -q . ||
  { echo "man page nbdkit-futuredisk-plugin.1 not installed"; exit 1; }
find "$stage" -name futuredisk.1 | grep -q . ||
  { echo "man page futuredisk.1 not installed"; exit 1; }
find "$stage" -path '*/bin/futuredisk' | grep -q . ||
  { echo "futuredisk command not installed"; exit 1; }
if [ -n "${FD_NBDKIT_PRELOAD:-}" ]; then
  export LD_PRELOAD=$FD_NBDKIT_PRELOAD ASAN_OPTIONS=detect_leaks=0
fi
nbdkit --dump-plugin "$so" | grep -qx 'name=futuredisk' ||
  { echo "nbdkit cannot load $so"; exit 1; }
echo "installed and loadable: $so"
