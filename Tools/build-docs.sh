#!/usr/bin/env bash
# Builds the DocC catalogs of Settings and SettingsPlist with the toolchain's own `docc` (no plugin):
# symbol graphs extracted from `swift build`'s modules (swift-symbolgraph-extract), then
# `docc convert --warnings-as-errors` per module. The catalogs' articles are the guides in Docs/
# (symbolic links: one source of truth); a guide no catalog links is an error.
# Usage: Tools/build-docs.sh [output-directory]   (default .build/docs)
# The archives are built for static hosting; see the README's Documentation section for viewing them.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-.build/docs}

status=0
for guide in Docs/*.md; do
    if ! find Sources/*/*.docc -type l -lname "*/$guide" | grep -q .; then
        echo "error: $guide is not an article of any DocC catalog (add a link to it in Sources/<Module>/<Module>.docc)" >&2
        status=1
    fi
done
for link in Sources/*/*.docc/*.md; do
    if [ -L "$link" ] && [ ! -e "$link" ]; then
        echo "error: $link points to a missing guide" >&2
        status=1
    fi
done
[ $status -eq 0 ] || exit $status

swift build --target Settings   # builds SettingsPlist and SettingsFiles too
BIN="$(swift build --show-bin-path)"
TRIPLE="$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')"
mkdir -p "$OUT"
for module in Settings SettingsPlist SettingsFiles; do
    dir="$OUT/graphs/$module"
    rm -rf "$dir" "$OUT/$module.doccarchive"
    mkdir -p "$dir"
    # The C target SettingsFiles imports (CSettingsFiles: one function glibc declares only for
    # _GNU_SOURCE) is found through the module map SwiftPM writes for it.
    swift-symbolgraph-extract -module-name "$module" -target "$TRIPLE" -I "$BIN/Modules" \
        -Xcc "-fmodule-map-file=$BIN/CSettingsFiles.build/module.modulemap" -Xcc -I -Xcc Sources/CSettingsFiles/include \
        -module-cache-path "$BIN/ModuleCache" -minimum-access-level public -skip-synthesized-members \
        -omit-extension-block-symbols -output-dir "$dir"
    docc convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$dir" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "settings.$module" \
        --output-path "$OUT/$module.doccarchive" \
        --warnings-as-errors
    echo "$module: $OUT/$module.doccarchive"
done
lower() { echo "$1" | tr '[:upper:]' '[:lower:]'; }
echo "To read them, serve an archive (file:// shows a blank page) and open the module's page, e.g.:"
for module in Settings SettingsPlist SettingsFiles; do
    echo "  python3 -m http.server --directory $OUT/$module.doccarchive 8000   # http://localhost:8000/documentation/$(lower $module)"
done
