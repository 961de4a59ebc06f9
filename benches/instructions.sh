#!/usr/bin/env bash
# Instruction counts of the paired benches under valgrind: noise-free where wall time on a
# shared machine is not. For each group of a bench, runs the bench binary twice under
# callgrind (`DDB_BENCH_COUNT=<group>:<side>`, 10,000 calls each), collecting only inside the
# measured `counted_*` functions, and prints instructions per call and the ratio.
#
#     benches/instructions.sh              # conversion and keys
#     benches/instructions.sh keys         # one bench
#     benches/instructions.sh e2e          # the end-to-end pairs, client and engine (see below)
#
# `e2e` counts whole operations instead: the bench binary runs one side of a pair `n` times
# after a fixed set-up (`DDB_E2E_COUNT=<pair>:<side>:<n>`), under callgrind with n = 0 and
# n = E2E_N (default 200), and the difference over E2E_N is one operation's instructions in
# the client and the embedded engine together (it serves from threads of the same process).
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
e2e_n=${E2E_N:-200}
for bench in "${benches[@]}"; do
    if [ "$bench" = e2e ]; then
        exe=$(cargo bench --bench e2e --no-run 2>&1 \
            | sed -n "s|.*(\([^()]*/e2e-[0-9a-f]*\)).*|\1|p" | tail -1)
        [ -x "$exe" ] || { echo "no executable for bench e2e" >&2; exit 1; }
        total() {
            DDB_E2E_COUNT="$1:$2:$3" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
                "$exe" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
        }
        for pair in $(DDB_E2E_COUNT=list "$exe"); do
            ddb=$(( ($(total "$pair" ddb-model "$e2e_n") - $(total "$pair" ddb-model 0)) ))
            hand=$(( ($(total "$pair" hand-written "$e2e_n") - $(total "$pair" hand-written 0)) ))
            awk -v g="e2e/$pair" -v d="$ddb" -v h="$hand" -v n="$e2e_n" \
                'BEGIN { printf "| %s | %.0f | %.0f | %.3f |\n", g, d / n, h / n, d / h }'
        done
        continue
    fi
    exe=$(cargo bench --bench "$bench" --no-run 2>&1 \
        | sed -n "s|.*(\([^()]*/$bench-[0-9a-f]*\)).*|\1|p" | tail -1)
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
