import Crypto
import Foundation

/// A PostgreSQL SCRAM-SHA-256 password verifier, computed on the client as `psql`'s `\password`
/// does: `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (base64). The server stores
/// it as is (`CREATE ROLE … PASSWORD 'SCRAM-SHA-256$…'`), so the password itself never reaches the
/// server, its statement log or its error log.
///
/// ```swift
/// let verifier = SCRAMVerifier(password: "correct horse", salt: salt).text
/// ```
struct SCRAMVerifier: Sendable {
    /// PostgreSQL's default (`scram_iterations`).
    static let defaultIterations = 4096

    let iterations: Int
    let salt: [UInt8]
    let storedKey: [UInt8]
    let serverKey: [UInt8]

    /// The verifier of `password` with `salt` (16 random bytes when nil).
    init(password: String, salt: [UInt8]? = nil, iterations: Int = Self.defaultIterations) {
        var generator = SystemRandomNumberGenerator()
        let salt = salt ?? (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        self.iterations = iterations
        self.salt = salt
        let salted = Self.pbkdf2SHA256(password: Array(Self.saslPrep(password).utf8), salt: salt, iterations: iterations)
        let key = SymmetricKey(data: salted)
        let clientKey = Array(HMAC<SHA256>.authenticationCode(for: Array("Client Key".utf8), using: key))
        storedKey = Array(SHA256.hash(data: clientKey))
        serverKey = Array(HMAC<SHA256>.authenticationCode(for: Array("Server Key".utf8), using: key))
    }

    /// `SCRAM-SHA-256$4096:<salt>$<StoredKey>:<ServerKey>`, as `pg_authid.rolpassword` holds it.
    var text: String {
        "SCRAM-SHA-256$\(iterations):\(Data(salt).base64EncodedString())$\(Data(storedKey).base64EncodedString()):\(Data(serverKey).base64EncodedString())"
    }

    /// PBKDF2-HMAC-SHA-256 (RFC 8018), one 32-byte block: SCRAM's `Hi(password, salt, i)`.
    static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int) -> [UInt8] {
        let key = SymmetricKey(data: password)
        var u = Array(HMAC<SHA256>.authenticationCode(for: salt + [0, 0, 0, 1], using: key))
        var result = u
        for _ in 1..<max(iterations, 1) {
            u = Array(HMAC<SHA256>.authenticationCode(for: u, using: key))
            for index in result.indices { result[index] ^= u[index] }
        }
        return result
    }

    /// The password as PostgreSQL's `pg_saslprep` prepares it (RFC 4013): ASCII unchanged; else
    /// non-ASCII spaces become U+0020, characters "commonly mapped to nothing" go, and the result
    /// is NFKC-normalized; a password with a prohibited character (control, private use,
    /// non-character, surrogate, tagging, bidirectional control, unassigned) is used unchanged, as
    /// PostgreSQL does. (The bidirectional-text rule is not checked: such passwords are normalized.)
    static func saslPrep(_ password: String) -> String {
        if password.utf8.allSatisfy({ $0 < 0x80 }) { return password }
        var mapped = String.UnicodeScalarView()
        for scalar in password.unicodeScalars {
            let v = scalar.value
            if [0x00A0, 0x1680, 0x202F, 0x205F, 0x3000].contains(v) || (0x2000...0x200B).contains(v) {
                mapped.append(" ")
            } else if [0x00AD, 0x034F, 0x1806, 0x180B, 0x180C, 0x180D, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF].contains(v)
                        || (0xFE00...0xFE0F).contains(v) {
                continue
            } else {
                mapped.append(scalar)
            }
        }
        let normalized = String(mapped).precomposedStringWithCompatibilityMapping
        for scalar in normalized.unicodeScalars where isProhibited(scalar) { return password }
        return normalized
    }

    private static func isProhibited(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || v == 0x7F || (0x80...0x9F).contains(v) { return true }   // controls
        if [0x06DD, 0x070F, 0x180E, 0x200C, 0x200D, 0x2028, 0x2029, 0xFEFF].contains(v) || (0x2060...0x2063).contains(v)
            || (0x206A...0x206F).contains(v) || (0xFFF9...0xFFFC).contains(v) || (0x1D173...0x1D17A).contains(v) { return true }
        if (0xE000...0xF8FF).contains(v) || v >= 0xF0000 { return true }   // private use
        if (0xFDD0...0xFDEF).contains(v) || v & 0xFFFE == 0xFFFE { return true }   // non-characters
        if v == 0xFFFD || (0x2FF0...0x2FFB).contains(v) { return true }
        if [0x0340, 0x0341, 0x200E, 0x200F].contains(v) || (0x202A...0x202E).contains(v) { return true }
        if v == 0xE0001 || (0xE0020...0xE007F).contains(v) { return true }   // tagging
        return scalar.properties.age == nil   // unassigned
    }
}
