#!/usr/bin/env bash
# make bench's import figure, as the benchmark makes it: `BENCH_MODES=load bench/run.sh` (3
# processes a contender here; make bench takes 15) measures `import portal_auth` and a first
# client over a bare interpreter beside requests + keyring, in one run, and prints the figure
# with its target. A speed is never a test's verdict: this checks that the figures are made
# and side by side, not what they are. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh bench-import

BENCH_MODES=load BENCH_SAMPLES=3 bench/run.sh > "$work/bench.out" 2> "$work/bench.err" \
    || { tail -n 40 "$work/bench.err"; fail "BENCH_MODES=load bench/run.sh"; }
for contender in py-library py-peer c-library c-floor; do
    [ "$(grep -c -P "^$contender\tload_ms\t[0-9.]+$" "$work/bench.out")" -eq 3 ] || fail "no 3 load figures of $contender"
done
pass "the load mode measures each contender in 3 processes, the binding beside the peer"
figure=$(grep -E "^(met   |MISSED)  import portal_auth and a first client at most 10 ms over a bare interpreter: [0-9.]+ ms \(requests \+ keyring: [0-9]+ ms" "$work/bench.out") \
    || fail "the load mode printed no import figure: $(tail -n 3 "$work/bench.out")"
echo "$figure (on this machine, now: a figure, not a verdict)"
pass "it prints the import figure beside the peer's"
finish
