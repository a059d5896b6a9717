#!/usr/bin/env bash
# caseforge in any CI that runs a shell: run the suite (in shards or in one go), merge the
# shards, write the reports, and gate the run against the committed baseline.
#
#   caseforge-ci.sh shard I N    run shard I of N (one CI job each); its report goes to
#                                $OUT/shards/I/report.json, to hand to the gate job
#   caseforge-ci.sh gate         merge $OUT/shards/*/report.json and gate the whole run
#   caseforge-ci.sh              all of it in one job: every shard in turn, then the gate
#
# Settings, from the environment:
#   SUITE        the suite folder (default examples/support-refund)
#   CONFIG       the configuration to run (default v2)
#   BASELINE     the committed baseline (default $SUITE/baseline.json)
#   SHARDS       how many shards, for the one-job form (default 1)
#   RUN_ID       the run every shard fills (default: ci-<date>-<pid>; in CI, the pipeline's id)
#   RUN_OPTIONS  more options for `caseforge run` (default "--max-cost 20")
#   OUT          where everything is written (default caseforge-out)
#
# It writes $OUT/merged/report.json, $OUT/junit.xml (one testcase per case, for the CI's test
# report), $OUT/report.md and $OUT/gate.md (for a comment wherever reviewers look), and exits
# with the gate's code: 0 passed or within noise, 1 a regression. Failing cases do not stop a
# shard (exit 0: the gate judges them); any other exit does: 1 an invalid dataset or config,
# 2 a usage error, 3 the budget, 4 agent errors, 5 the store. Check out the whole history
# first (the run records the repository's root commit, as the baseline did).
set -euo pipefail

SUITE=${SUITE:-examples/support-refund}
CONFIG=${CONFIG:-v2}
BASELINE=${BASELINE:-$SUITE/baseline.json}
SHARDS=${SHARDS:-1}
RUN_ID=${RUN_ID:-ci-$(date -u +%Y%m%d-%H%M%S)-$$}
RUN_OPTIONS=${RUN_OPTIONS:---max-cost 20}
OUT=${OUT:-caseforge-out}

run_shard() {  # I N: shard I of N, in a store of its own
  local index=$1 count=$2
  mkdir -p "$OUT/shards/$index"
  # shellcheck disable=SC2086  # RUN_OPTIONS is a list of options
  caseforge run "$SUITE" --config "$CONFIG" --run-id "$RUN_ID" --shard "$index/$count" \
    --store "sqlite:///$PWD/$OUT/shards/$index/store.db" --out "$OUT/shards/$index" -q \
    $RUN_OPTIONS
}

gate() {  # merge every shard's report, write the reports, gate the whole run
  caseforge merge "$OUT"/shards/*/report.json --suite "$SUITE" --out "$OUT/merged"
  caseforge report "$OUT/merged/report.json" --format junit --out "$OUT/junit.xml"
  caseforge report "$OUT/merged/report.json" --format md --out "$OUT/report.md"
  local code=0
  caseforge gate "$OUT/merged/report.json" --baseline "$BASELINE" --format md \
    --out "$OUT/gate.md" > /dev/null || code=$?
  caseforge gate "$OUT/merged/report.json" --baseline "$BASELINE" || true  # the log: why
  return "$code"
}

case "${1:-all}" in
  shard) run_shard "$2" "$3" ;;
  gate) gate ;;
  all)
    rm -rf "$OUT/shards"
    for index in $(seq 1 "$SHARDS"); do
      run_shard "$index" "$SHARDS"
    done
    gate
    ;;
  *) echo "usage: $0 [shard I N | gate]" >&2; exit 2 ;;
esac
