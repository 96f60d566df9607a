#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
import SettingsFiles
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SettingsModel {
    /// Saves the model to its own property-list file, atomically and durably (a temporary file
    /// flushed to disk and renamed over the target, as the store saves).
    ///
    /// When the file exists, nothing in it is lost: keys the model does not know are written
    /// back untouched at every depth (inside array elements too), values that did not decode
    /// when it was loaded are written back unless the program changed them since, its
    /// `$version` is never lowered, and it keeps its format, permissions and owner. A file that
    /// does not parse is moved aside to `NAME.corrupt-<UTC timestamp>` (at most 3 are kept) and
    /// reported to ``SettingsDiagnostics/handler`` with its line and column, as the store does.
    /// A new file is created owner-only (0600), in owner-only (0700) new directories.
    ///
    /// ```swift
    /// try profile.save(to: URL(filePath: "profile.plist"))                 // XML, or the file's format
    /// try profile.save(to: URL(filePath: "profile.bplist"), format: .binary)
    /// ```
    ///
    /// - Parameters:
    ///   - url: the file (a symbolic link is followed: its target is replaced).
    ///   - format: XML (human-editable) or binary; `nil` (the default) keeps an existing file's
    ///     format and writes a new file as XML.
    /// - Throws: ``SettingsError``: `.typeMismatch` when a field cannot be stored or the model
    ///   nests deeper than readers accept (512 levels), `.invalidFile` when the file's
    ///   `"$version"` is not an integer or it cannot be read, moved aside or written, naming the
    ///   file (the old file is then unchanged).
    public func save(to url: URL, format: PlistFormat? = nil) throws(SettingsError) {
        let path = url.path
        let name: String
        do {
            name = ModelFiles.name(of: try PlistFile.target(of: path).path)
        } catch {
            throw SettingsError(.invalidFile, path: path, detail: "not saved: \(error)")
        }
        let remembered = ModelFiles.memory(for: name, as: Self.self)
        // One change of the file (SettingsFileTransaction), as the store's saves and the tool make
        // it; a model file is not a settings domain: it keeps no history, and a lock file this
        // save had to create is removed again while still held.
        var options = SettingsFileTransaction.Options()
        options.lockWait = .upTo(PersistenceOptions().lockTimeout)
        options.removesCreatedLockFile = true
        options.malformed = .moveAside(ifStill: nil, keeping: ModelFiles.quarantineLimit)
        options.format = format
        var noRecorder: PlistRecorder?
        var refusal: SettingsError?
        var memory: ModelArchive<Self>.Memory?
        let outcome: SettingsFileTransaction.Outcome
        do throws(SettingsFileTransaction.Failure) {
            outcome = try SettingsFileTransaction.run(
                at: path, options: options,
                known: remembered?.file.map { .init(identity: $0.identity, contents: $0.dictionary, format: $0.format, held: $0.held) },
                recorder: &noRecorder
            ) { (current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? in
                do throws(SettingsError) {
                    let (dictionary, after) = try ModelArchive<Self>.saving(
                        self, over: current.movedAside == nil ? current.contents : nil, memory: remembered,
                        source: current.target, changedElsewhere: current.wasReread)
                    memory = after
                    return .init(contents: dictionary, changed: [], writer: SettingsProvenance.thisProcess(.write))
                } catch {
                    refusal = error
                    throw SettingsFileTransaction.Failure(.refused, current.target, error.description)
                }
            }
        } catch {
            if let refusal { throw refusal }
            switch error.kind {
            case .locked:
                throw SettingsError(.fileLocked, path: error.target, detail: error.detail)
            case .malformed(_, let problem):
                var failure = SettingsError(.invalidFile, path: error.target, underlying: problem)
                failure.append(detail: "not saved")
                throw failure
            default:
                throw SettingsError(.invalidFile, path: error.target, detail: error.detail)
            }
        }
        guard case .written(let written) = outcome else { return }  // a waited-for lock is never busy; an edit always writes
        if let (destination, problem) = written.current.movedAside {
            var report = SettingsError(.invalidFile, path: written.current.target, underlying: problem)
            report.append(detail: "moved aside to \(destination); the model was written in its place")
            SettingsDiagnostics.report(SettingsDiagnostic(.fileError, report.description))
        }
        if let reason = written.fellBackToBinary {
            SettingsDiagnostics.report(SettingsDiagnostic(.fileError, SettingsFileTransaction.binaryFallbackMessage(written.current.target, reason)))
        }
        var after = memory ?? ModelArchive<Self>.Memory(loaded: self)
        after.file = ModelArchive<Self>.FileState(identity: written.known.identity, held: written.known.held,
                                                  dictionary: written.known.contents, format: written.known.format)
        ModelFiles.remember(after, for: name, as: Self.self)
    }

    /// Loads a model from a property-list file (XML or binary). Migrations run first; fields
    /// missing from the file keep their defaults; a field that does not decode keeps its default
    /// and is reported to ``SettingsDiagnostics/handler`` (naming the file and field), and its
    /// stored value stays in the file when the model is saved back to it.
    ///
    /// ```swift
    /// let profile = try Profile.load(from: URL(filePath: "profile.plist"))
    /// ```
    ///
    /// - Parameter url: the file.
    /// - Returns: the model.
    /// - Throws: ``SettingsError``: `.missingFile`, or `.invalidFile` when the file cannot be
    ///   read or parsed (with line and column or byte offset), its root is not a dictionary, or a
    ///   migration fails.
    public static func load(from url: URL) throws(SettingsError) -> Self {
        let path = url.path
        let data: [UInt8]
        let identity: PlistFile.Identity
        let target: String
        do {
            target = try PlistFile.target(of: path).path
            guard let read = try PlistFile.read(target, followingLinks: false) else {
                throw SettingsError(.missingFile, path: path)
            }
            data = read.bytes
            identity = read.identity
        } catch let error as PlistFile.Failure {
            throw SettingsError(.invalidFile, path: path, detail: "\(error)")
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(.invalidFile, path: path, detail: "\(error)")
        }
        let value: PlistValue
        do {
            value = try PlistValue(decoding: data)
        } catch {
            throw SettingsError(.invalidFile, path: path, underlying: error.inFile(path))
        }
        guard case .dictionary(let stored) = value else {
            throw SettingsError(.invalidFile, path: path, detail: "the root is \(value.typeNameWithArticle), expected a dict")
        }
        let (model, loaded) = try ModelArchive<Self>.load(stored, source: path)
        var memory = loaded
        memory.file = ModelArchive<Self>.FileState(identity: identity, held: PlistFile.Held.take(target, as: identity),
                                                   dictionary: stored, format: PlistFormat.detect(data))
        ModelFiles.remember(memory, for: ModelFiles.name(of: target), as: Self.self)
        return model
    }
}

/// What loading each model file learnt, by file and model type, so saving back loses nothing;
/// and the steps of a model file's save.
///
/// The memory is bounded: at most ``capacity`` files, and at most ``byteCapacity`` bytes of
/// their contents, are remembered; the least recently loaded or saved are forgotten first. A
/// model file forgotten is saved as one never loaded in this process: it is read again, the
/// keys the model does not know are kept, but the model's values are written as they are
/// (values that did not decode at load are not known to be kept, and changes another process
/// made meanwhile are not told apart from this process's).
enum ModelFiles {
    /// How many `NAME.corrupt-*` files are kept beside a model file, as beside a settings file.
    static let quarantineLimit = PersistenceOptions().quarantineLimit
    /// The most model files remembered at once.
    static let capacity = 32
    /// The most bytes of model files (as stored) remembered at once.
    static let byteCapacity = 4 << 20

    private struct Entry {
        var memory: any Sendable
        var bytes: Int
        var lastUse: UInt64
    }

    private struct Registry {
        var entries: [String: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private static let registry = Mutex(Registry())

    static func remember<Model: SettingsModel>(_ memory: ModelArchive<Model>.Memory, for path: String, as: Model.Type) {
        let key = "\(Model.self)|\(path)"
        let bytes = Int(clamping: memory.file?.identity.size ?? 0)
        registry.locked { registry in
            registry.clock += 1
            registry.bytes -= registry.entries[key]?.bytes ?? 0
            registry.entries[key] = Entry(memory: memory, bytes: bytes, lastUse: registry.clock)
            registry.bytes += bytes
            // Forget the least recently used until within bounds (the newest entry stays).
            while registry.entries.count > capacity || (registry.bytes > byteCapacity && registry.entries.count > 1) {
                guard let oldest = registry.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) else { break }
                registry.bytes -= oldest.value.bytes
                registry.entries[oldest.key] = nil
            }
        }
    }

    static func memory<Model: SettingsModel>(for path: String, as: Model.Type) -> ModelArchive<Model>.Memory? {
        registry.locked { registry -> (any Sendable)? in
            guard var entry = registry.entries["\(Model.self)|\(path)"] else { return nil }
            registry.clock += 1
            entry.lastUse = registry.clock
            registry.entries["\(Model.self)|\(path)"] = entry
            return entry.memory
        } as? ModelArchive<Model>.Memory
    }

    /// The one name of the file at `target` (a path after the link rule) under which it is
    /// remembered: its directory with links, `.` and `..` resolved, so a file loaded as
    /// `link.plist` or `dir/./NAME` and saved as its target is found again.
    ///
    /// - Parameter target: the file, after ``PlistFile/target(of:)``.
    /// - Returns: the canonical path (`target` itself when its directory cannot be resolved).
    static func name(of target: String) -> String {
        guard let resolved = realpath(PlistFile.directory(of: target), nil) else { return target }
        defer { free(resolved) }
        let directory = String(cString: resolved)
        return (directory == "/" ? "" : directory) + "/" + PlistFile.name(of: target)
    }

    /// How many files, and how many of their bytes, are remembered now.
    static var remembered: (files: Int, bytes: Int) {
        registry.locked { ($0.entries.count, $0.bytes) }
    }
}
