import Foundation
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Testing

/// What the tool keeps in a domain's history: nothing is discarded that no generation holds when
/// that generation cannot be written (a full disk), and as many generations as the program keeps.
struct HistoryKeepingCLITests {
    /// Runs the tool with every file it writes limited to 1 KiB or less (`ulimit -f 2`, with
    /// SIGXFSZ ignored): a write past the limit fails with EFBIG, as a write past the end of a
    /// full disk fails with ENOSPC, whoever runs it (root included). A small settings file still
    /// fits; a generation of a larger one does not.
    static func runOnAFullDisk(_ arguments: [String], environment: [String: String]) throws -> CLI.Output {
        let script = "trap '' XFSZ; ulimit -f 2 || exit 99; exec \"$0\" \"$@\""
        return try CLI.launch(URL(filePath: "/bin/sh"), ["-c", script, CLI.executable.path] + arguments, environment: environment)
    }

    /// 60 keys of 40 characters: kept as a generation, far more than 1 KiB.
    static let handEdited: PlistDictionary = {
        var contents = PlistDictionary()
        for i in 0..<60 { contents["hand\(i)"] = .string("edited by hand, held by no generation \(i)") }
        return contents
    }()

    /// An application domain `App` whose history holds `["a": 1]`, then edited by hand to
    /// ``handEdited``: the file holds the only copy of it.
    func handEditedDomain(in dir: TemporaryDirectory) throws -> (environment: [String: String], file: URL) {
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: environment, "write", "App", "a", "1").status == 0)
        let file = dir.url.appending(path: "App/settings.plist")
        try PlistValue.dictionary(Self.handEdited).write(to: file)
        return (environment, file)
    }

    /// Each verb that discards content, with what it is given (`FILE` is the domain's file,
    /// `SMALL` a small plist to import).
    static let discardingVerbs: [[String]] = [
        ["reset", "App"],
        ["delete", "App"],
        ["import", "App", "SMALL"],
        ["restore", "App", "1"],
        ["write", "App", "{ x = 1; }"],
        ["delete", "App", "hand3"],
        ["write", "App", "hand3", "replaced"],
        ["create", "xml1", "FILE"],
        ["replace", "hand3", "-string", "replaced", "FILE"],
    ]

    /// Whether this is the ThreadSanitizer build (`-DSETTINGS_TSAN`): its runtime cannot run
    /// under `ulimit -f 2` (the tool dies with "ThreadSanitizer:DEADLYSIGNAL" before it does anything).
    static let underThreadSanitizer: Bool = {
        #if SETTINGS_TSAN
        true
        #else
        false
        #endif
    }()

    @Test(.disabled(if: underThreadSanitizer, "ThreadSanitizer's runtime cannot run under ulimit -f"), arguments: discardingVerbs)
    func aVerbThatWouldDiscardAHandEditNoGenerationHoldsIsRefusedWhenTheGenerationCannotBeKept(_ verb: [String]) throws {
        let dir = try TemporaryDirectory()
        let (environment, file) = try handEditedDomain(in: dir)
        let small = try dir.writePlist("small.plist", "<dict><key>x</key><integer>1</integer></dict>")
        let before = try Data(contentsOf: file)
        let arguments = verb.map { $0 == "FILE" ? file.path : $0 == "SMALL" ? small.path : $0 }
        let out = try Self.runOnAFullDisk(arguments, environment: environment)
        #expect(out.status == 1, "\(arguments): \(out.output)")
        #expect(out.stderr.contains("not changed"), "\(out.stderr)")
        #expect(out.stderr.contains("no generation"), "\(out.stderr)")
        #expect(try Data(contentsOf: file) == before, "\(arguments) changed the file")
    }

    @Test func aHistoryJournalThatCannotBeWrittenRefusesAsAFullDiskDoes() throws {
        let dir = try TemporaryDirectory()
        let (environment, file) = try handEditedDomain(in: dir)
        let journal = URL(filePath: PlistHistory.journal(for: file.path))
        try FileManager.default.removeItem(at: journal)
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: false)  // a directory where the journal must be
        let before = try Data(contentsOf: file)
        let out = try CLI.run(environment: environment, "reset", "App")
        #expect(out.status == 1, "\(out.output)")
        #expect(out.stderr.contains("not changed"), "\(out.stderr)")
        #expect(try Data(contentsOf: file) == before)
    }

    @Test(.disabled(if: underThreadSanitizer, "ThreadSanitizer's runtime cannot run under ulimit -f"))
    func aVerbDiscardsContentsTheNewestGenerationHoldsEvenWhenNoGenerationCanBeKept() throws {
        let dir = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        let big = dir.url.appending(path: "big.plist")
        try PlistValue.dictionary(Self.handEdited).write(to: big)
        #expect(try CLI.run(environment: environment, "import", "App", big.path).status == 0)  // generation 1 holds it
        let out = try Self.runOnAFullDisk(["reset", "App"], environment: environment)
        #expect(out.status == 0, "\(out.output)")
        #expect(try CLI.run(environment: environment, "keys", "App").stdout == "")
        // The contents are still in generation 1.
        #expect(try CLI.run(environment: environment, "restore", "App", "1").status == 0)
        #expect(try CLI.run(environment: environment, "read", "App", "hand59").stdout == "edited by hand, held by no generation 59\n")
    }

    // MARK: The program's history limits (layers.plist)

    /// An application domain `App` whose program keeps `limit` generations (its manifest says so).
    func domainKeeping(_ limit: Int, in dir: TemporaryDirectory) throws -> [String: String] {
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: environment, "write", "App", "first", "1").status == 0)
        var manifest = PlistLayersManifest()
        manifest.historyLimit = limit
        try manifest.write(beside: dir.path("App/settings.plist"))
        return environment
    }

    func generations(in dir: TemporaryDirectory) throws -> [Int] {
        try PlistHistory.list(for: dir.url.appending(path: "App/settings.plist").path).map(\.number)
    }

    @Test func theToolKeepsAsManyGenerationsAsTheProgramDoes() throws {
        let dir = try TemporaryDirectory()
        let environment = try domainKeeping(25, in: dir)
        for i in 0..<23 { #expect(try CLI.run(environment: environment, "write", "App", "k", "\(i)").status == 0) }
        #expect(try generations(in: dir).count == 24)  // the default 20 would have pruned them
    }

    @Test func aLimitOfZeroKeepsNoneAndRemovesWhatWasKept() throws {
        let dir = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        for i in 0..<5 { #expect(try CLI.run(environment: environment, "write", "App", "apiToken", "t\(i)").status == 0) }
        #expect(try generations(in: dir).count == 5)
        var manifest = PlistLayersManifest()
        manifest.historyLimit = 0
        try manifest.write(beside: dir.path("App/settings.plist"))
        #expect(try CLI.run(environment: environment, "write", "App", "apiToken", "t9").status == 0)
        #expect(try generations(in: dir).isEmpty)
        #expect(try CLI.run(environment: environment, "history", "App").stdout.contains("no history kept yet"))
        // Nothing to keep, so nothing to refuse: a reset goes on.
        #expect(try CLI.run(environment: environment, "reset", "App").status == 0)
    }

    @Test func aManifestRecordsTheLimitsItIsGiven() throws {
        var manifest = PlistLayersManifest()
        #expect(manifest.historyLimits == PlistHistory.Limits())
        manifest.historyLimit = 0
        manifest.historyByteBudget = 4096
        let read = try PlistLayersManifest(plist: manifest.plist)
        #expect(read == manifest)
        #expect(read.historyLimits == PlistHistory.Limits(count: 0, bytes: 4096))
        #expect(throws: PlistError.self) { try PlistLayersManifest(plist: ["historyLimit": -1]) }
        #expect(throws: PlistError.self) { try PlistLayersManifest(plist: ["historyLimit": "20"]) }
    }
}
