#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension PlistValue {
    /// Reads a property list in either format, detected from its first bytes.
    ///
    /// ```swift
    /// let value = try PlistValue(decoding: bytes)
    /// let timeout = value["Network"]?["timeout"]?.doubleValue
    /// ```
    ///
    /// - Parameters:
    ///   - bytes: an XML or binary plist.
    ///   - options: limits for hostile input.
    /// - Throws: ``PlistError`` naming the problem and its line/column (XML) or byte offset (binary).
    public init(decoding bytes: some Sequence<UInt8>, options: PlistReadOptions = .init()) throws(PlistError) {
        let result: Result<PlistValue, PlistError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(PlistError) in try Self.decode(buffer, options: options) }
        }
        if let result {
            self = try result.get()
        } else {
            let array = Array(bytes)
            self = try array.withUnsafeBufferPointer { buffer throws(PlistError) in try Self.decode(buffer, options: options) }
        }
    }

    /// Reads a property list from `data`, in either format.
    ///
    /// - Parameters:
    ///   - data: an XML or binary plist.
    ///   - options: limits for hostile input.
    /// - Throws: ``PlistError`` naming the problem and where it is.
    public init(decoding data: Data, options: PlistReadOptions = .init()) throws(PlistError) {
        let result = data.withUnsafeBytes { raw in
            Result { () throws(PlistError) in try Self.decode(raw.bindMemory(to: UInt8.self), options: options) }
        }
        self = try result.get()
    }

    /// Reads the property-list file at `url`, in either format.
    ///
    /// ```swift
    /// let defaults = try PlistValue(contentsOf: URL(filePath: "Defaults.plist"))
    /// ```
    ///
    /// - Parameters:
    ///   - url: a file URL.
    ///   - options: limits for hostile input.
    /// - Throws: ``PlistError`` with the file's path: ``PlistError/Code/io`` when it cannot be read,
    ///   or the parse error with its position.
    public init(contentsOf url: URL, options: PlistReadOptions = .init()) throws(PlistError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw PlistError(.io, "cannot read file: \(PlistError.reason(error))", path: url.path)
        }
        do {
            self = try PlistValue(decoding: data, options: options)
        } catch {
            throw error.inFile(url.path)
        }
    }

    package static func decode(_ buffer: UnsafeBufferPointer<UInt8>, options: PlistReadOptions) throws(PlistError) -> PlistValue {
        switch PlistFormat.detect(buffer) {
        case .binary: try BinaryPlistReader.read(buffer, options: options)
        case .xml: try XMLPlistReader.read(buffer, options: options)
        }
    }

    /// The plist's bytes in `format`.
    ///
    /// ```swift
    /// let xml = try value.encoded(as: .xml)       // tab-indented, like Apple's tools
    /// let binary = try value.encoded(as: .binary) // bplist00, shared duplicates
    /// ```
    ///
    /// - Parameter format: XML (default) or binary.
    /// - Throws: ``PlistError/Code/unencodable`` when a string holds characters XML 1.0 cannot carry.
    public func encoded(as format: PlistFormat = .xml) throws(PlistError) -> Data {
        switch format {
        case .xml: try XMLPlistWriter.writeData(self)  // the document's buffer, not a copy
        case .binary: Data(try BinaryPlistWriter.write(self))
        }
    }

    /// The plist's bytes in `format`, as an array.
    ///
    /// - Parameter format: XML (default) or binary.
    /// - Throws: ``PlistError/Code/unencodable`` when a string holds characters XML 1.0 cannot carry.
    public func encodedBytes(as format: PlistFormat = .xml) throws(PlistError) -> [UInt8] {
        switch format {
        case .xml: try XMLPlistWriter.write(self)
        case .binary: try BinaryPlistWriter.write(self)
        }
    }

    /// The plist's bytes in binary form, each value written where it occurs (none shared): for
    /// a value with few repeats, such as a history record, whose sharing would cost more to
    /// find than it saves. Reads back as ``encodedBytes(as:)`` does.
    ///
    /// - Parameter capacity: the bytes to reserve for the result at once (its size, when the
    ///   caller knows roughly what it writes).
    package func unsharedBinaryBytes(reservingCapacity capacity: Int = 0) throws(PlistError) -> [UInt8] {
        var flattener = BinaryPlistFlattener(sharing: false, reservingCapacity: capacity)
        _ = try flattener.add(self, depth: 0)
        return flattener.finish()
    }

    /// Writes the plist to `url` atomically (a temporary file renamed over the target).
    ///
    /// - Parameters:
    ///   - url: a file URL.
    ///   - format: XML (default) or binary.
    /// - Throws: ``PlistError`` with the file's path when encoding or writing fails.
    public func write(to url: URL, format: PlistFormat = .xml) throws(PlistError) {
        let bytes: Data
        do {
            bytes = try encoded(as: format)
        } catch {
            throw error.inFile(url.path)
        }
        do {
            try bytes.write(to: url, options: .atomic)
        } catch {
            throw PlistError(.io, "cannot write file: \(PlistError.reason(error))", path: url.path)
        }
    }
}

extension PlistError {
    /// A short reason for a Foundation I/O error, without Foundation's long wrapper text.
    ///
    /// ```swift
    /// PlistError.reason(error)   // "no such file", "permission denied", ...
    /// ```
    ///
    /// - Parameter error: an error thrown by `Data(contentsOf:)` or `Data.write(to:)`.
    package static func reason(_ error: any Error) -> String {
        if let e = error as? CocoaError {
            switch e.code {
            case .fileReadNoSuchFile, .fileNoSuchFile: return "no such file"
            case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
            case .fileWriteOutOfSpace: return "no space left on device"
            case .fileReadCorruptFile: return "corrupt file"
            default: break
            }
        }
        return "\(error)"
    }
}
