import Foundation

/// A parsed `postgres://user:password@host:port/database?sslmode=…` URL.
struct PostgresURL: Hashable, Sendable {
    enum TLSMode: Hashable, Sendable { case disable, require }

    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String?
    var tls: TLSMode

    /// Parses `text`; a non-loopback host must ask for TLS (`sslmode=require`, `verify-ca` or
    /// `verify-full`; the certificate is always verified fully).
    init(_ text: String, password overridePassword: String?) throws(SettingsSyncError) {
        // Never echo the text: it may hold a password.
        guard let c = URLComponents(string: text) else {
            throw .invalidURL("cannot parse it (not shown: it may hold a password; percent-encode special characters)")
        }
        guard let scheme = c.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw .invalidURL("the scheme must be postgres:// or postgresql://")
        }
        guard let host = c.host, !host.isEmpty else { throw .invalidURL("no host") }
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = c.port ?? 5432
        guard (1...65535).contains(port) else { throw .invalidURL("port \(port) out of range") }
        guard let user = c.user?.removingPercentEncoding, !user.isEmpty else { throw .invalidURL("no user name (or bad %-encoding in it)") }
        self.user = user
        var urlPassword: String?
        if let encoded = c.password {
            guard let decoded = encoded.removingPercentEncoding else {
                throw .invalidURL("the password is not valid %-encoding (not shown)")
            }
            urlPassword = decoded
        }
        self.password = overridePassword ?? urlPassword
        let path = c.path.hasPrefix("/") ? String(c.path.dropFirst()) : c.path
        self.database = path.isEmpty ? nil : (path.removingPercentEncoding ?? path)
        let sslmode = c.queryItems?.last { $0.name == "sslmode" }?.value?.lowercased()
        let loopback = Self.isLoopback(self.host)
        switch sslmode {
        case "require", "verify-ca", "verify-full":
            tls = .require
        case nil, "disable", "allow", "prefer":
            guard loopback else { throw .tlsRequired(host: self.host) }
            tls = .disable
        case let other?:
            throw .invalidURL("unknown sslmode \(other)")
        }
    }

    /// 127.0.0.0/8, ::1 and `localhost`.
    static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased()
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
