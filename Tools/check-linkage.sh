#!/usr/bin/env bash
# The `settings` tool links the codec and the files on disk only: it must not load the Swift
# Dispatch overlay, Observation or full Foundation (what the Settings library brings in), which
# would slow every start of the tool. (libdispatch itself comes with the Swift concurrency
# runtime that FoundationEssentials needs, and is allowed.) Modelled on swift-configuration's
# Scripts/run-linkage-test.sh.
#   Tools/check-linkage.sh [BIN_DIR]     (default: swift build --show-bin-path)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_DIR=${1:-$(swift build --show-bin-path)}
TOOL="$BIN_DIR/settings"
[ -x "$TOOL" ] || { echo "check-linkage: $TOOL is not built" >&2; exit 2; }
forbidden='libswiftDispatch\.so|libswiftObservation\.so|libFoundation\.so|libFoundationNetworking\.so|libFoundationXML\.so'
libraries=$(ldd "$TOOL")
if found=$(grep -E "$forbidden" <<<"$libraries"); then
    echo "check-linkage: $TOOL loads libraries it must not:" >&2
    echo "$found" >&2
    exit 1
fi
# The check itself is checked: the library's example program does load them.
example=$(ldd "$BIN_DIR/SettingsExample")
if ! grep -qE 'libswiftObservation\.so' <<<"$example"; then
    echo "check-linkage: SettingsExample does not load Observation: the check no longer tells anything" >&2
    exit 1
fi
echo "check-linkage: $TOOL loads no Dispatch overlay, Observation or full Foundation"
