public import Foundation

/// A fresh directory for one test's files, removed when the test lets go of it: every test that
/// touches the disk makes its own, so tests running in parallel never see each other's files.
///
/// ```swift
/// let dir = try TemporaryDirectory()
/// let settings = try dir.write("settings.plist", "<plist><dict/></plist>")
/// let missing = dir.path("missing.plist")  // a path, for APIs and tools that take one
/// ```
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// Creates a new, empty directory under the system's temporary directory.
    /// - Throws: The file system's error when the directory cannot be created.
    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appending(path: "settings-tests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The directory's path.
    public var path: String { url.path }

    /// The URL of `name` in the directory (the file need not exist; `name` may hold `/`).
    public func file(_ name: String = "settings.plist") -> URL {
        url.appending(path: name, directoryHint: .notDirectory)
    }

    /// The path of `name` in the directory (the file need not exist).
    public func path(_ name: String) -> String { file(name).path }

    /// Writes `text` as it is to `name`, and returns the file's URL.
    /// - Throws: The file system's error when the file cannot be written.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> URL {
        let url = file(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Writes an XML property list whose `<plist>` element holds `body` to `name`, and returns its URL.
    /// - Throws: The file system's error when the file cannot be written.
    @discardableResult
    public func writePlist(_ name: String, _ body: String) throws -> URL {
        try write(name, """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            \(body)
            </plist>

            """)
    }

    /// The names in the directory, or in its subdirectory `sub`, hidden ones included, sorted.
    /// - Throws: The file system's error when the directory cannot be listed.
    public func listing(_ sub: String = "") throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: sub.isEmpty ? path : path(sub)).sorted()
    }

    /// The contents of `name` in the directory.
    /// - Throws: The file system's error when the file cannot be read.
    public func bytes(_ name: String) throws -> Data { try Data(contentsOf: file(name)) }

    /// The permission bits of the file at `url` (`-1` when the file system gives none).
    /// - Throws: The file system's error when the file cannot be examined.
    public func permissions(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
