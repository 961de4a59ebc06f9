#!/usr/bin/env bash
# Instruction counts of the paired benches under valgrind: noise-free where wall time on a
# shared machine is not. For each group of a bench, runs the bench binary twice under
# callgrind (`DDB_BENCH_COUNT=<group>:<side>`, 10,000 calls each), collecting only inside the
# measured `counted_*` functions, and prints instructions per call and the ratio.
#
#     benches/instructions.sh              # conversion and keys
#     benches/instructions.sh keys         # one bench
#
# Needs valgrind (apt-get install valgrind). Builds the benches in the bench profile.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

iterations=10000
benches=("${@:-conversion keys}")
read -r -a benches <<<"${benches[*]}"

printf '| benchmark | ddb-model (instructions per call) | hand-written | ratio |\n'
printf '| --- | ---: | ---: | ---: |\n'
for bench in "${benches[@]}"; do
    exe=$(cargo bench --bench "$bench" --no-run 2>&1 \
        | sed -n "s|.*(\(target/[^)]*/$bench-[0-9a-f]*\)).*|\1|p" | tail -1)
    [ -x "$exe" ] || { echo "no executable for bench $bench" >&2; exit 1; }
    groups=$(DDB_BENCH_COUNT=list "$exe")
    for group in $groups; do
        count() {
            DDB_BENCH_COUNT="$group:$1" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
                --toggle-collect='*counted_*' "$exe" 2>&1 \
                | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
        }
        ddb=$(count ddb-model)
        hand=$(count hand-written)
        awk -v g="$group" -v d="$ddb" -v h="$hand" -v n="$iterations" \
            'BEGIN { printf "| %s | %.0f | %.0f | %.2f |\n", g, d / n, h / n, d / h }'
    done
done
