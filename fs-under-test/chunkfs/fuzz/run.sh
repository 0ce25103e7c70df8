#!/bin/sh
# Run the checker's fuzz target for a bounded time from the seed corpus
# (CTest: chunkfs/fuzz-check).  Deterministic: a fixed seed.  A crash,
# a hang (-timeout) or a sanitizer report fails the test; the input that
# did it is kept in the working directory's artifacts/.
# usage: run.sh FUZZER SEED-CORPUS SECONDS
set -eu
fuzzer=$1 corpus=$2 seconds=$3
work=$(mktemp -d /tmp/fuzz-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p artifacts
"$fuzzer" -seed=1 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
  -artifact_prefix=artifacts/ -print_final_stats=1 "$work" "$corpus"
