import Foundation
import Logging
import NIOSSL
import PostgresNIO

extension PostgresURL {
    /// A connection to this server (5 s to connect), TLS as the URL asks.
    func connect(id: Int, logger: Logger) async throws -> PostgresConnection {
        var config = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: try tlsConfiguration())
        config.options.connectTimeout = .seconds(5)
        config.options.additionalStartupParameters = [("application_name", "settings-sync")]
        do {
            return try await PostgresConnection.connect(configuration: config, id: id, logger: logger)
        } catch let error as PSQLError where error.serverInfo == nil {
            // The real cause, at once: "connection refused 127.0.0.1:1", not a later timeout.
            throw SyncConnectionError(description: "\(Self.cause(of: error)) \(host):\(port)")
        }
    }

    /// The lowest-level reason a connection failed, in a few words ("connection refused").
    static func cause(of error: PSQLError) -> String {
        let text = error.underlying.map { String(describing: $0) } ?? "\(error.code)"
        for known in ["Connection refused", "Connection reset by peer", "No route to host", "Network is unreachable",
                      "connectTimeout", "Name or service not known", "certificate", "handshake"] where text.contains(known) {
            switch known {
            case "connectTimeout": return "connection timed out (5 s)"
            case "Name or service not known": return "unknown host"
            case "certificate", "handshake": return "TLS failed (\(text.replacingOccurrences(of: "\n", with: " ").prefix(160)))"
            default: return known.lowercased()
            }
        }
        return text.replacingOccurrences(of: "\n", with: " ")
    }

    /// `.require` verifies the certificate fully (chain and host name, as `sslmode=verify-full`).
    func tlsConfiguration() throws -> PostgresConnection.Configuration.TLS {
        switch tls {
        case .disable: .disable
        case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
    }
}
