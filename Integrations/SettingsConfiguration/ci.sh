#!/usr/bin/env bash
# CI for the SettingsConfiguration integration package (run from anywhere): builds with zero
# warnings, builds the root package's `settings` tool beside the tests (the tests run it as the
# second process that edits a settings file), runs the tests (swift-configuration's
# ProviderCompatTest among them) and a smoke run of the benchmark.
#   bash Integrations/SettingsConfiguration/ci.sh
set -euo pipefail
cd "$(dirname "$0")"
echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors
swift build --product settings -Xswiftc -warnings-as-errors
echo "== tests"
swift test --skip-build
echo "== benchmark smoke run (release)"
swift run -c release settings-config-bench --quick
echo "== SettingsConfiguration CI passed"
