import Crypto
import Foundation
import Testing
@testable import SettingsPostgres

/// The SCRAM-SHA-256 verifier `add-user` sends instead of the password (issue 30, item 3).
struct SCRAMVerifierTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// PBKDF2-HMAC-SHA-256 vectors (RFC 7914 section 11, and the RFC 6070 inputs with SHA-256).
    @Test(arguments: [
        ("passwd", "salt", 1, "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"),
        ("password", "salt", 1, "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"),
        ("password", "salt", 2, "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"),
        ("password", "salt", 4096, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
    ])
    func pbkdf2MatchesTheVectors(password: String, salt: String, iterations: Int, expected: String) {
        let key = SCRAMVerifier.pbkdf2SHA256(password: Array(password.utf8), salt: Array(salt.utf8), iterations: iterations)
        #expect(Self.hex(key) == expected)
    }

    /// RFC 7677's exchange (user "user", password "pencil"): the verifier's keys produce the
    /// server signature and accept the client proof of the RFC.
    @Test func theVerifierAnswersRFC7677sExchange() throws {
        let salt = try #require(Data(base64Encoded: "W22ZaJ0SNY7soEsUEjb6gQ=="))
        let verifier = SCRAMVerifier(password: "pencil", salt: Array(salt), iterations: 4096)
        #expect(verifier.text.hasPrefix("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$"))
        let authMessage = "n=user,r=rOprNGfwEbeRWgbNEkqO,"
            + "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,"
            + "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
        let serverSignature = HMAC<SHA256>.authenticationCode(for: Array(authMessage.utf8), using: SymmetricKey(data: verifier.serverKey))
        #expect(Data(serverSignature).base64EncodedString() == "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
        let proof = Array(try #require(Data(base64Encoded: "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")))
        let clientSignature = Array(HMAC<SHA256>.authenticationCode(for: Array(authMessage.utf8), using: SymmetricKey(data: verifier.storedKey)))
        let clientKey = zip(proof, clientSignature).map { $0 ^ $1 }
        #expect(Array(SHA256.hash(data: clientKey)) == verifier.storedKey)
        #expect(verifier.text == "SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$\(Data(verifier.storedKey).base64EncodedString()):\(Data(verifier.serverKey).base64EncodedString())")
    }

    @Test func eachVerifierHasItsOwnSalt() {
        let a = SCRAMVerifier(password: "same"), b = SCRAMVerifier(password: "same")
        #expect(a.salt.count == 16)
        #expect(a.text != b.text)
    }

    /// SASLprep as PostgreSQL's: ASCII as is; non-ASCII spaces mapped, NFKC; prohibited unchanged.
    @Test func saslPrepAsPostgreSQL() {
        #expect(SCRAMVerifier.saslPrep("I X") == "I X")
        #expect(SCRAMVerifier.saslPrep("a\u{00A0}b\u{00AD}c") == "a bc")
        #expect(SCRAMVerifier.saslPrep("\u{2168}") == "IX")
        #expect(SCRAMVerifier.saslPrep("\u{00AA}") == "a")
        #expect(SCRAMVerifier.saslPrep("é\u{0007}") == "é\u{0007}")
    }
}
