public import SettingsPlist
// `layers.plist`: what a running program laid over and under a plist file it keeps (the files
// read below and above it, the keys it renamed, the environment prefix it reads, and how much
// history of the file it keeps), written by the program into the file's companion directory so
// that another process (a command-line tool) can see the same layers and keep the same history.
// Generic: it names files, keys and limits, nothing more.

/// The layers a program keeps around one plist file, as written to `layers.plist` in the file's
/// companion directory (``PlistFile/companionDirectory(for:)``).
///
/// A program that reads defaults files, override files and environment variables writes one so
/// that a tool can explain a key the way the program sees it:
///
/// ```swift
/// var manifest = PlistLayersManifest()
/// manifest.defaultsFiles = ["/usr/share/app/Defaults.plist"]
/// manifest.renames = [PlistLayersManifest.Rename(key: "Network/timeout", formerly: ["timeout"])]
/// try manifest.write(beside: "/home/ada/.config/App/settings.plist")
/// let read = try PlistLayersManifest.read(beside: "/home/ada/.config/App/settings.plist")   // the same
/// ```
public struct PlistLayersManifest: Hashable, Sendable {
    /// The manifest's file name in the companion directory: the one place it is spelled.
    public static let fileName = "layers.plist"
    /// The largest manifest read, in bytes (a manifest names files and keys: it is small).
    public static let sizeLimit = 1 << 20

    /// A key that had other names before: readers look under the old names when the key is absent.
    public struct Rename: Hashable, Sendable {
        /// The key path now (`/`-separated, `\/` for a slash inside a component).
        public var key: String
        /// Its earlier key paths, the first one looked at first.
        public var formerly: [String]

        /// Creates a rename.
        ///
        /// - Parameters:
        ///   - key: the key path now.
        ///   - formerly: its earlier key paths, in the order they are looked at.
        public init(key: String, formerly: [String]) {
            self.key = key
            self.formerly = formerly
        }
    }

    /// The defaults files read, in order (a later one wins), as absolute paths where known.
    public var defaultsFiles: [String] = []
    /// The override files read, in order (a later one wins).
    public var overrideFiles: [String] = []
    /// The keys renamed.
    public var renames: [Rename] = []
    /// The prefix of the environment variables read (`MYAPP` for `MYAPP_TIMEOUT`), if any.
    public var environmentPrefix: String?
    /// How many generations of the file the program keeps in its history (0: none), when it
    /// says; a tool that edits the file keeps the same (``PlistHistory/Limits``).
    public var historyLimit: Int?
    /// The most bytes the program lets the file's history take, when it says.
    public var historyByteBudget: Int?

    /// The history limits the program asked for (the defaults for what it does not say).
    public var historyLimits: PlistHistory.Limits {
        let defaults = PlistHistory.Limits()
        return PlistHistory.Limits(count: historyLimit ?? defaults.count, bytes: historyByteBudget ?? defaults.bytes)
    }

    /// An empty manifest.
    public init() {}

    /// The manifest as a plist dictionary (the file's contents).
    public var plist: PlistValue {
        var dict = PlistDictionary()
        dict["defaultsFiles"] = .array(defaultsFiles.map(PlistValue.string))
        dict["overrideFiles"] = .array(overrideFiles.map(PlistValue.string))
        dict["renames"] = .array(renames.map { rename in
            .dictionary(["key": .string(rename.key), "formerly": .array(rename.formerly.map(PlistValue.string))])
        })
        if let environmentPrefix { dict["environmentPrefix"] = .string(environmentPrefix) }
        if let historyLimit { dict["historyLimit"] = .integer(PlistInteger(Int64(historyLimit))) }
        if let historyByteBudget { dict["historyByteBudget"] = .integer(PlistInteger(Int64(historyByteBudget))) }
        return .dictionary(dict)
    }

    /// Reads a manifest from its plist form; entries of the wrong type are refused.
    ///
    /// - Parameter plist: the file's root value.
    /// - Throws: `PlistError` (`.typeMismatch`) naming the entry that is not what it should be.
    public init(plist: PlistValue) throws(PlistError) {
        guard case .dictionary(let dict) = plist else { throw Self.malformed("the root is not a dictionary") }
        defaultsFiles = try Self.strings(dict["defaultsFiles"], "defaultsFiles")
        overrideFiles = try Self.strings(dict["overrideFiles"], "overrideFiles")
        for (index, entry) in (dict["renames"]?.arrayValue ?? []).enumerated() {
            guard case .dictionary(let rename) = entry, let key = rename["key"]?.stringValue else {
                throw Self.malformed("renames item \(index) is not a dictionary with a string 'key'")
            }
            renames.append(Rename(key: key, formerly: try Self.strings(rename["formerly"], "renames item \(index) formerly")))
        }
        if let prefix = dict["environmentPrefix"] {
            guard let text = prefix.stringValue else { throw Self.malformed("environmentPrefix is not a string") }
            environmentPrefix = text
        }
        historyLimit = try Self.count(dict["historyLimit"], "historyLimit")
        historyByteBudget = try Self.count(dict["historyByteBudget"], "historyByteBudget")
    }

    /// The earlier names of `key`, or none.
    ///
    /// - Parameter key: a key path.
    /// - Returns: its earlier key paths, first looked at first.
    public func formerNames(of key: String) -> [String] {
        renames.first { $0.key == key }?.formerly ?? []
    }

    /// The key `oldName` was renamed to, if it is an old name.
    ///
    /// - Parameter oldName: a key path.
    /// - Returns: the key path it is now, or `nil`.
    public func currentName(of oldName: String) -> String? {
        renames.first { $0.formerly.contains(oldName) }?.key
    }

    /// Reads the manifest kept beside the plist file `target`, if there is one.
    ///
    /// - Parameter target: the plist file, after the link rule (``PlistFile/target(of:)``).
    /// - Returns: the manifest, or `nil` when there is none.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory or an unreadable file;
    ///   `PlistError` for one that does not parse or is malformed.
    public static func read(beside target: String) throws -> PlistLayersManifest? {
        guard let directory = try PlistFile.existingCompanionDirectory(for: target),
              let contents = try PlistFile.read(directory + "/" + fileName, limit: sizeLimit, followingLinks: false) else { return nil }
        return try PlistLayersManifest(plist: PlistValue(decoding: contents.bytes))
    }

    /// Writes the manifest beside the plist file `target` (atomically, owner-only), creating
    /// the companion directory when needed.
    ///
    /// - Parameter target: the plist file, after the link rule.
    /// - Throws: ``PlistFile/Failure`` or `PlistError`.
    public func write(beside target: String) throws {
        let directory = try PlistFile.makeCompanionDirectory(for: target)
        _ = try PlistFile.replace(directory + "/" + Self.fileName, with: plist.encodedBytes(as: .xml), permissions: 0o600)
    }

    private static func strings(_ value: PlistValue?, _ name: String) throws(PlistError) -> [String] {
        guard let value else { return [] }
        guard let items = value.arrayValue else { throw malformed("\(name) is not an array") }
        var strings: [String] = []
        for item in items {
            guard let text = item.stringValue else { throw malformed("\(name) holds \(item.typeName), not a string") }
            strings.append(text)
        }
        return strings
    }

    /// A count that is not negative (a larger one than `Int` holds is `Int.max`), or `nil` when absent.
    private static func count(_ value: PlistValue?, _ name: String) throws(PlistError) -> Int? {
        guard let value else { return nil }
        guard case .integer(let n) = value, !n.description.hasPrefix("-") else {
            throw malformed("\(name) is not a whole number of at least 0")
        }
        return n.intValue ?? Int.max
    }

    private static func malformed(_ detail: String) -> PlistError {
        PlistError(.typeMismatch, "\(fileName): \(detail)")
    }
}
