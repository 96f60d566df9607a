
/// The state of a decode in recovery mode: the defaults to fall back on and what was recovered.
final class PlistDecodingRecovery {
    /// Values to fall back on, looked up by the dictionary keys of a failed value's location
    /// (never inside arrays: positions in a default array say nothing about stored elements).
    let defaults: PlistValue?
    var issues: [PlistRecoveredIssue] = []

    init(defaults: PlistValue?) {
        self.defaults = defaults
    }

    /// The steps of a coding path.
    static func steps(_ path: [any CodingKey]) -> [PlistPathStep] {
        path.map { key in
            if let own = key as? PlistCodingKey, case .index(let i) = own { return .index(i) }
            return .key(key.stringValue)
        }
    }

    /// The default for the value at `path`, when the defaults have one.
    func defaultValue(at path: [any CodingKey]) -> PlistValue? {
        var node = defaults
        for step in Self.steps(path) {
            guard case .key(let name) = step, case .dictionary(let dictionary)? = node else { return nil }
            node = dictionary[name]
        }
        return node
    }

    /// Records that the value at `path` did not decode; issues recorded inside it before are
    /// dropped (the value as a whole is what was replaced).
    func record(_ error: any Error, at path: [any CodingKey], _ outcome: PlistRecoveredIssue.Outcome) {
        let location = Self.steps(path)
        while let last = issues.last, last.location.count > location.count, Array(last.location.prefix(location.count)) == location {
            issues.removeLast()
        }
        let plistError = PlistError.coding(error, at: path, fallback: .invalidValue)
        var message = plistError.message
        let rendered = CodingPathText.render(path)
        if let inner = plistError.codingPath, inner != rendered, !inner.isEmpty { message = "at \(inner): \(message)" }
        issues.append(PlistRecoveredIssue(location: location, codingPath: rendered, message: message, outcome: outcome))
    }
}

extension PlistDecoder {
    /// Decodes `value` as a `T`, recovering from parts that do not decode instead of failing:
    /// a keyed value takes its default from `defaults` (at the same dictionary keys) or, when
    /// decoded as an optional, `nil`; a missing key that has a default takes it unreported; an array element or a string-keyed dictionary entry that
    /// does not decode is left out. Only a failure with nothing to fall back on up to the top
    /// throws. Each recovery is listed in the returned issues, innermost ones replaced by the
    /// outer value that took their place. The cost stays linear in the size of `value`.
    ///
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - value: the plist to read.
    ///   - defaults: the encoded defaults to fall back on.
    /// - Returns: the value and what was recovered.
    /// - Throws: ``PlistError`` when the value as a whole cannot be decoded.
    package func decodeRecovering<T: Decodable>(
        _ type: T.Type, from value: PlistValue, defaults: PlistValue?
    ) throws(PlistError) -> (T, [PlistRecoveredIssue]) {
        let recovery = PlistDecodingRecovery(defaults: defaults)
        let decoder = PlistValueDecoder(
            value: value, path: [], maximumDepth: options.maximumDepth, userInfo: userInfo, recovery: recovery)
        do {
            let result = try decoder.decodeCurrentValue(as: type)
            return (result, recovery.issues)
        } catch {
            throw PlistError.coding(error, at: decoder.path, fallback: .invalidValue)
        }
    }
}

/// Collections whose elements are decoded one by one in recovery mode, leaving out the ones
/// that do not decode.
protocol PlistRecoverableCollection {
    /// Decodes the decoder's current value, element by element.
    static func decodeRecovering(from decoder: PlistValueDecoder) throws -> Self
}

extension Array: PlistRecoverableCollection where Element: Decodable {
    static func decodeRecovering(from decoder: PlistValueDecoder) throws -> [Element] {
        guard case .array(let elements) = decoder.value else {
            throw CodingFailure.mismatch(expected: "array", found: decoder.value).located(at: decoder.path)
        }
        let depth = decoder.path.count
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for i in elements.indices {
            let key = PlistCodingKey.index(i)
            do {
                result.append(try decoder.decodeNested(elements[i], as: Element.self, depth: depth, extraPath: [], key: key))
            } catch {
                decoder.recovery?.record(error, at: decoder.path + [key], .droppedElement)
            }
        }
        return result
    }
}

extension Dictionary: PlistRecoverableCollection where Key == String, Value: Decodable {
    static func decodeRecovering(from decoder: PlistValueDecoder) throws -> [String: Value] {
        guard case .dictionary(let entries) = decoder.value else {
            throw CodingFailure.mismatch(expected: "dict", found: decoder.value).located(at: decoder.path)
        }
        let depth = decoder.path.count
        var result: [String: Value] = [:]
        result.reserveCapacity(entries.count)
        for (name, value) in entries {
            let key = PlistCodingKey.name(name)
            do {
                result[name] = try decoder.decodeNested(value, as: Value.self, depth: depth, extraPath: [], key: key)
            } catch {
                decoder.recovery?.record(error, at: decoder.path + [key], .droppedEntry)
            }
        }
        return result
    }
}
