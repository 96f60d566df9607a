package import SettingsPlist
// The secret-name rule and the redaction of property-list values, shared by the `Settings`
// library (`SettingsSecrets`, errors, diagnostics) and the `settings` tool (`--show-secrets`).

package enum PlistSecrets {
    /// What a secret value is printed as.
    package static let redactedText = "<redacted>"

    /// How secret a key component's name looks (``secrecy(ofName:)``).
    package enum NameSecrecy: Int, Comparable, Sendable {
        /// An ordinary name.
        case none
        /// A name that often holds a secret but as often does not (`hotKey`, `sessionTimeout`):
        /// not secret, but worth a warning where it would leave the device in clear.
        case maybe
        /// Named like a secret: its values are secret.
        case secret

        package static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// Words that make a component secret wherever they appear in it (letters only, case ignored).
    private static let secretWords = ["password", "passwd", "passphrase", "passcode", "secret", "token", "apikey",
                                      "accesskey", "privatekey", "credential", "pwd", "jwt", "bearer", "authheader",
                                      "authorizationheader", "licensekey", "encryptionkey", "signingkey", "sessioncookie",
                                      "authcookie", "otpseed", "pincode"]
    /// Words that make a component secret when they are its last word (`userPin`, `SIM_PIN`,
    /// `pin2`), and not elsewhere (`pinnedTabs`, `spinner`, `pinToTop`).
    private static let secretLastWords = ["pin", "otp", "cookie"]
    /// Words that make a component look secret (``NameSecrecy/maybe``) anywhere in it.
    private static let maybeWords = ["authorization", "signature", "cookie", "sessionid"]
    /// Words that make a component look secret as its last word (`hotKey`, `passwordHash`).
    private static let maybeLastWords = ["auth", "key", "salt", "hash", "nonce", "cert", "certificate", "license"]

    /// Whether a key component is named like a secret: it contains `password`, `passwd`,
    /// `passphrase`, `passcode`, `secret`, `token`, `apiKey`, `accessKey`, `privateKey`,
    /// `credential`, `pwd`, `jwt`, `bearer`, `authHeader`, `authorizationHeader`, `licenseKey`,
    /// `encryptionKey`, `signingKey`, `sessionCookie`, `authCookie`, `otpSeed` or `pinCode`, or its
    /// last word is `pin`, `otp` or `cookie`; ignoring case, `_` and `-` (`API_TOKEN`,
    /// `client-secret`, `dbPassword`, `userPin`, `SIM_PIN`).
    ///
    /// - Parameter component: one key component (not a whole path).
    /// - Returns: whether values under it are treated as secret.
    package static func isSecretName(_ component: String) -> Bool {
        secrecy(ofName: component) == .secret
    }

    /// How secret `component` looks: ``NameSecrecy/secret`` by the rule of ``isSecretName(_:)``;
    /// ``NameSecrecy/maybe`` when it contains `authorization`, `signature`, `cookie` or
    /// `sessionId`, or its last word is `auth`, `key`, `salt`, `hash`, `nonce`, `cert`,
    /// `certificate` or `license`; else ``NameSecrecy/none``.
    ///
    /// Words are split where a lowercase letter is followed by an uppercase one (`userPin`), before
    /// the last capital of a run followed by lowercase (`PINCode`), and at anything but a letter.
    package static func secrecy(ofName component: String) -> NameSecrecy {
        // ASCII names (nearly all) are compared as bytes: Unicode property look-ups and
        // `String.contains` cost tens of microseconds per name, and every configuration read of
        // a store key asks this.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        var words = LastWord()
        for byte in component.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                words.letter(upper: false, at: bytes.count)
                bytes.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                words.letter(upper: true, at: bytes.count)
                bytes.append(byte | 0x20)
            case 0x80...: return unicodeSecrecy(component)
            default: words.separator()
            }
        }
        return secrecy(letters: bytes, lastWordStart: words.start, lists: asciiLists)
    }

    /// The word lists, in the element type a name is compared in.
    private struct WordLists<Element: Equatable & Sendable>: Sendable {
        let secret, secretLast, maybe, maybeLast: [[Element]]

        init(_ element: (String) -> [Element]) {
            secret = secretWords.map(element)
            secretLast = secretLastWords.map(element)
            maybe = maybeWords.map(element)
            maybeLast = maybeLastWords.map(element)
        }
    }

    private static let asciiLists = WordLists { Array($0.utf8) }
    private static let scalarLists = WordLists { Array($0.unicodeScalars) }

    /// ``secrecy(ofName:)`` from a name's lowercased letters and where its last word starts.
    private static func secrecy<Letters: RandomAccessCollection>(
        letters: Letters, lastWordStart: Int, lists: WordLists<Letters.Element>
    ) -> NameSecrecy where Letters.Index == Int, Letters.Element: Sendable {
        func contains(_ words: [[Letters.Element]]) -> Bool {
            words.contains { word in
                word.count <= letters.count && (0...(letters.count - word.count)).contains { start in
                    letters[start..<(start + word.count)].elementsEqual(word)
                }
            }
        }
        func lastWordIs(_ words: [[Letters.Element]]) -> Bool {
            let last = letters[min(lastWordStart, letters.count)...]
            return words.contains { last.elementsEqual($0) }
        }
        if contains(lists.secret) || lastWordIs(lists.secretLast) { return .secret }
        if contains(lists.maybe) || lastWordIs(lists.maybeLast) { return .maybe }
        return .none
    }

    /// Where the last word of a name starts, fed its characters in order.
    private struct LastWord {
        var start = 0
        var previous: Bool? = nil   // whether the previous character was an uppercase letter; nil: not a letter
        var beforePrevious: Bool? = nil

        /// A letter at `index` of the name's letters.
        mutating func letter(upper: Bool, at index: Int) {
            switch (previous, upper) {
            case (nil, _): start = index                       // after a separator, or the first letter
            case (false?, true): start = index                 // userPin
            case (true?, false) where beforePrevious == true:  // PINCode: the word starts at the C
                start = index - 1
            default: break
            }
            beforePrevious = previous
            previous = upper
        }

        mutating func separator() {
            beforePrevious = previous
            previous = nil
        }
    }

    /// ``secrecy(ofName:)`` for a name with non-ASCII characters: letters in any script, lowercased.
    private static func unicodeSecrecy(_ component: String) -> NameSecrecy {
        var letters: [Unicode.Scalar] = []
        letters.reserveCapacity(component.utf8.count)
        var words = LastWord()
        for scalar in component.unicodeScalars {
            guard scalar.properties.isAlphabetic else { words.separator(); continue }
            let lower = scalar.properties.lowercaseMapping.unicodeScalars
            words.letter(upper: scalar.properties.isUppercase, at: letters.count)
            letters.append(contentsOf: lower)
        }
        return secrecy(letters: letters, lastWordStart: words.start, lists: scalarLists)
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
