import Foundation

/// Where the shared conformance corpus is: `shared/conformance/corpus/public` beside the package's
/// checkout (as `.ci/run` finds it), or under `$SHARED_DIR` when that is set. Found relative to
/// this file, so the tests run from any clone; a missing corpus fails the tests that need it
/// (see ``ConformanceCorpusTests``) instead of skipping them.
enum ConformanceCorpus {
    static let root: String = {
        if let shared = ProcessInfo.processInfo.environment["SHARED_DIR"], !shared.isEmpty {
            return shared + "/conformance/corpus/public"
        }
        let package = URL(filePath: #filePath)  // Tests/SettingsPlistTests/ConformanceCorpus.swift
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return package.deletingLastPathComponent().appending(path: "shared/conformance/corpus/public").path
    }()
}
