#!/usr/bin/env bash
# Builds the libFuzzer targets for the XML and binary plist readers and runs each for N seconds,
# seeded from the package's fixtures (Tests/SettingsPlistTests/Fixtures), from a conformance corpus when
# CONFORMANCE_DIR names one (CI's), and from Fuzz/seeds/<target>/.  Usage: Fuzz/run.sh [SECONDS] [xml|binary|both]
# Findings (crashing inputs) are written to Fuzz/out/<target>/ and make the script exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
which=${2:-both}
seed_roots=(Tests/SettingsPlistTests/Fixtures)
[ -n "${CONFORMANCE_DIR:-}" ] && seed_roots+=("$CONFORMANCE_DIR/corpus")
mkdir -p Fuzz/out .build-fuzz

build() {  # $1 = xml|binary
    local flag=FUZZ_XML
    [ "$1" = binary ] && flag=FUZZ_BINARY
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g -D "$flag" -module-name SettingsPlist -package-name Settings \
        $(find Sources/SettingsPlist -name "*.swift") Fuzz/FuzzTarget.swift -o ".build-fuzz/fuzz-$1" 2>&1 \
        | { grep -v "Cannot export local symbol" || true; }
}

seed() {  # $1 = xml|binary; copies matching corpus inputs into a fresh work corpus
    local dir=Fuzz/corpus-work/$1
    rm -rf "$dir"; mkdir -p "$dir"
    for root in "${seed_roots[@]}"; do
        [ -d "$root" ] || continue
        find "$root" -type f ! -name '*.json' ! -name '*.error' ! -name '*.md' | while read -r f; do
            if head -c 6 "$f" | grep -q '^bplist'; then kind=binary; else kind=xml; fi
            [ "$kind" = "$1" ] && cp "$f" "$dir/$(echo "$f" | md5sum | cut -c1-16)"
        done
    done
    # Hand-made attack inputs kept with the sources (Fuzz/seeds/xml, Fuzz/seeds/binary).
    if [ -d "Fuzz/seeds/$1" ]; then cp Fuzz/seeds/"$1"/* "$dir/"; fi
    echo "$dir"
}

status=0
for t in xml binary; do
    [ "$which" = both ] || [ "$which" = "$t" ] || continue
    echo "== fuzz-$t: building"
    build "$t"
    work=$(seed "$t")
    mkdir -p "Fuzz/out/$t"
    echo "== fuzz-$t: running ${seconds}s from $(ls "$work" | wc -l) seeds"
    log=Fuzz/out/$t.log
    if ASAN_OPTIONS=detect_leaks=0 ".build-fuzz/fuzz-$t" -max_total_time="$seconds" -max_len=65536 \
        -timeout=10 -rss_limit_mb=2048 -artifact_prefix="Fuzz/out/$t/" -print_final_stats=1 "$work" >"$log" 2>&1; then
        echo "fuzz-$t: no findings; $(grep -E 'stat::number_of_executed_units' "$log" | awk '{print $2}') executions"
    else
        echo "fuzz-$t: FINDING (see $log and Fuzz/out/$t/)"; tail -40 "$log"; status=1
    fi
done
exit $status
