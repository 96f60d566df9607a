#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
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
        let file: PlistFile.Target
        do {
            file = try PlistFile.target(of: path)
        } catch {
            throw SettingsError(.invalidFile, path: path, detail: "not saved: \(error)")
        }
        let target = file.path
        let remembered = ModelFiles.memory(for: path, as: Self.self)
        var identity: PlistFile.Identity?
        var existing: PlistDictionary?
        var existingFormat: PlistFormat?
        var malformed: SettingsError?
        if let known = remembered?.file, let current = try? PlistFile.identity(of: target), current == known.identity {
            // Unchanged since this process read or wrote it: no need to read it again.
            identity = current
            existing = known.dictionary
            existingFormat = known.format
        } else {
            let read: PlistFile.Contents?
            do {
                read = try PlistFile.read(target, followingLinks: false)
            } catch {
                throw SettingsError(.invalidFile, path: target, detail: "not saved: \(error)")
            }
            if let read {
                identity = read.identity
                switch SettingsFile.parse(read.bytes, at: target) {
                case .success(let (dictionary, detected)):
                    existing = dictionary
                    existingFormat = detected
                case .failure(let problem) where file.isThroughLink:
                    // Never moved aside or replaced: the link may have been planted.
                    let reason = problem.underlying.map { "\($0)" } ?? problem.detail ?? "it does not parse"
                    throw SettingsError(.invalidFile, path: target, detail: "not saved: " + file.notAPropertyList(reason).operation)
                case .failure(let problem):
                    malformed = problem
                }
            }
        }
        let (dictionary, memory) = try ModelArchive<Self>.saving(self, over: existing, memory: remembered, source: target)
        // XML asked for by name is XML or an error; a file that is XML by default or by its
        // existing format becomes binary when XML cannot carry a value (as the store's file does).
        let bytes: Data
        let written: PlistFormat
        if let format {
            do {
                bytes = try PlistValue.dictionary(dictionary).encoded(as: format)
            } catch {
                throw SettingsError(.invalidFile, path: target, detail: "not saved: \(PlistError.reason(error))")
            }
            written = format
        } else {
            let encoded = try SettingsFile.encode(dictionary, as: existingFormat ?? .xml, for: target)
            (bytes, written) = (encoded.bytes, encoded.format)
            if let reason = encoded.fellBack {
                SettingsDiagnostics.report(SettingsDiagnostic(.fileError, SettingsFile.binaryFallbackMessage(target, reason)))
            }
        }
        if let identity, var problem = malformed {
            let destination: String?
            do {
                destination = try SettingsFile.moveAside(malformed: target, identity, keeping: ModelFiles.quarantineLimit)
            } catch {
                problem.append(detail: "could not move it aside (\(error)); not saved")
                throw problem
            }
            guard let destination else {
                problem.append(detail: "it changed while being saved; not saved")
                throw problem
            }
            problem.append(detail: "moved aside to \(destination); the model was written in its place")
            SettingsDiagnostics.report(SettingsDiagnostic(.fileError, problem.description))
        }
        try SettingsFile.createDirectory(of: target)
        let newIdentity: PlistFile.Identity
        do {
            newIdentity = try PlistFile.replace(
                target, with: bytes, permissions: identity?.permissions ?? 0o600, owner: identity?.owner)
        } catch {
            throw SettingsError(.invalidFile, path: target, detail: "not saved: \(error)")
        }
        var after = memory ?? ModelArchive<Self>.Memory(loaded: self)
        after.file = ModelArchive<Self>.FileState(identity: newIdentity, dictionary: dictionary, format: written)
        ModelFiles.remember(after, for: path, as: Self.self)
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
        do {
            guard let read = try PlistFile.read(PlistFile.target(of: path).path, followingLinks: false) else {
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
        memory.file = ModelArchive<Self>.FileState(identity: identity, dictionary: stored, format: PlistFormat.detect(data))
        ModelFiles.remember(memory, for: path, as: Self.self)
        return model
    }
}

/// What loading each model file learnt, by file and model type, so saving back loses nothing.
enum ModelFiles {
    /// How many `NAME.corrupt-*` files are kept beside a model file, as beside a settings file.
    static let quarantineLimit = PersistenceOptions().quarantineLimit

    private static let memories = Mutex<[String: any Sendable]>([:])

    static func remember<Model: SettingsModel>(_ memory: ModelArchive<Model>.Memory, for path: String, as: Model.Type) {
        memories.locked { $0["\(Model.self)|\(path)"] = memory }
    }

    static func memory<Model: SettingsModel>(for path: String, as: Model.Type) -> ModelArchive<Model>.Memory? {
        memories.locked { $0["\(Model.self)|\(path)"] } as? ModelArchive<Model>.Memory
    }
}
