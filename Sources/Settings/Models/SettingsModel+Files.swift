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
    /// When the file exists, keys the model does not know are written back untouched, and so are
    /// fields that did not decode when it was loaded (unless they were changed since).
    ///
    /// ```swift
    /// try profile.save(to: URL(filePath: "profile.plist"))                 // XML
    /// try profile.save(to: URL(filePath: "profile.bplist"), format: .binary)
    /// ```
    ///
    /// - Parameters:
    ///   - url: the file.
    ///   - format: XML (human-editable) or binary.
    /// - Throws: ``SettingsError``: `.typeMismatch` when a field cannot be stored, `.invalidFile`
    ///   naming the file when it cannot be written (the old file is then unchanged).
    public func save(to url: URL, format: PlistFormat = .xml) throws(SettingsError) {
        let path = url.path
        var existing: PlistDictionary?
        var permissions: mode_t = 0o644
        if let read = try? POSIXFile.read(path) {
            permissions = read.identity.permissions
            existing = (try? PlistValue(decoding: read.data))?.dictionaryValue
        }
        let dictionary = try ModelArchive<Self>.save(self, over: existing, memory: ModelFiles.memory(for: path, as: Self.self))
        do {
            let bytes = try PlistValue.dictionary(dictionary).encoded(as: format)
            let directory = url.deletingLastPathComponent()
            if !FileManager.default.fileExists(atPath: directory.path) {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            _ = try POSIXFile.replace(path, with: bytes, permissions: permissions)
        } catch let error as POSIXFile.Failure {
            throw SettingsError(.invalidFile, path: path, detail: "not saved: \(error)")
        } catch {
            throw SettingsError(.invalidFile, path: path, detail: "not saved: \(PlistError.reason(error))")
        }
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
        let data: Data
        do {
            guard let read = try POSIXFile.read(path) else { throw SettingsError(.missingFile, path: path) }
            data = read.data
        } catch let error as POSIXFile.Failure {
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
        let (model, memory) = try ModelArchive<Self>.load(stored, source: path)
        ModelFiles.remember(memory, for: path, as: Self.self)
        return model
    }
}

/// What loading each model file learnt, by file and model type, so saving back loses nothing.
enum ModelFiles {
    private static let memories = Mutex<[String: any Sendable]>([:])

    static func remember<Model: SettingsModel>(_ memory: ModelArchive<Model>.Memory, for path: String, as: Model.Type) {
        memories.locked { $0["\(Model.self)|\(path)"] = memory }
    }

    static func memory<Model: SettingsModel>(for path: String, as: Model.Type) -> ModelArchive<Model>.Memory? {
        memories.locked { $0["\(Model.self)|\(path)"] } as? ModelArchive<Model>.Memory
    }
}
