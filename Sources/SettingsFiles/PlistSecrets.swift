package import SettingsPlist
// The secret-name rule and the redaction of property-list values, shared by the `Settings`
// library (`SettingsSecrets`, errors, diagnostics) and the `settings` tool (`--show-secrets`).

package enum PlistSecrets {
    /// What a secret value is printed as.
    package static let redactedText = "<redacted>"

    /// The words that make a key component secret, compared with letters only, case ignored.
    private static let secretWords = ["password", "passwd", "passphrase", "secret", "token", "apikey",
                                      "accesskey", "privatekey", "credential"]

    /// Whether a key component is named like a secret: it contains `password`, `passwd`,
    /// `passphrase`, `secret`, `token`, `apiKey`, `accessKey`, `privateKey` or `credential`,
    /// ignoring case, `_` and `-` (`API_TOKEN`, `client-secret`, `dbPassword`).
    ///
    /// - Parameter component: one key component (not a whole path).
    /// - Returns: whether values under it are treated as secret.
    package static func isSecretName(_ component: String) -> Bool {
        // ASCII names (nearly all) are compared as bytes: Unicode property look-ups and
        // `String.contains` cost tens of microseconds per name, and every configuration read of
        // a store key asks this.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        for byte in component.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): bytes.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): bytes.append(byte | 0x20)
            case 0x80...: return isSecretUnicodeName(component)
            default: continue
            }
        }
        return secretWordBytes.contains { word in
            word.count <= bytes.count && (0...(bytes.count - word.count)).contains { start in
                bytes[start..<(start + word.count)].elementsEqual(word)
            }
        }
    }

    /// ``secretWords`` as bytes.
    private static let secretWordBytes = secretWords.map { Array($0.utf8) }

    /// ``isSecretName(_:)`` for a name with non-ASCII characters: letters in any script, lowercased.
    private static func isSecretUnicodeName(_ component: String) -> Bool {
        var letters = ""
        letters.reserveCapacity(component.utf8.count)
        for scalar in component.unicodeScalars where scalar.properties.isAlphabetic {
            letters.unicodeScalars.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
        }
        return secretWords.contains { letters.contains($0) }
    }

    /// `value` with every value under a secret-named key replaced by ``redactedText``; all of it
    /// when `pathIsSecret` (the value's own key path is secret).
    package static func redacting(_ value: PlistValue, pathIsSecret: Bool = false) -> PlistValue {
        redacted(value, parentIsSecret: pathIsSecret)
    }

    package static func redacting(_ old: PlistValue, _ new: PlistValue) -> (PlistValue, PlistValue) {
        redactedPair(old, new)
    }

    private static func redacted(_ value: PlistValue, parentIsSecret: Bool) -> PlistValue {
        if parentIsSecret { return .string(redactedText) }
        switch value {
        case .dictionary(let entries):
            return .dictionary(PlistDictionary(zip(entries.keys, entries.values).map { key, child in
                (key, redacted(child, parentIsSecret: isSecretName(key)))
            }))
        case .array(let items):
            return .array(items.map { redacted($0, parentIsSecret: false) })
        default:
            return value
        }
    }

    private static func redactedPair(_ old: PlistValue, _ new: PlistValue) -> (PlistValue, PlistValue) {
        guard case .dictionary(let left) = old, case .dictionary(let right) = new else {
            return (redacted(old, parentIsSecret: false), redacted(new, parentIsSecret: false))
        }
        var a: [(String, PlistValue)] = [], b: [(String, PlistValue)] = []
        for (key, value) in zip(left.keys, left.values) {
            guard let other = right[key] else {
                a.append((key, redacted(value, parentIsSecret: isSecretName(key))))
                continue
            }
            if isSecretName(key) {
                a.append((key, .string(redactedText)))
                b.append((key, .string(other == value ? redactedText : "<redacted (changed)>")))
            } else {
                let (x, y) = redactedPair(value, other)
                a.append((key, x))
                b.append((key, y))
            }
        }
        for (key, value) in zip(right.keys, right.values) where left[key] == nil {
            b.append((key, redacted(value, parentIsSecret: isSecretName(key))))
        }
        return (.dictionary(PlistDictionary(a)), .dictionary(PlistDictionary(b)))
    }
}
