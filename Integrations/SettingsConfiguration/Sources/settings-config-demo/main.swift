// A small service configured through swift-configuration, with its settings kept by Settings.
//
//   swift run settings-config-demo --http-port 9000        # or HTTP_PORT=9000; default 8080
//   settings write settings-config-demo log/level debug    # from another terminal: applied at once, kept for the next run
//
// It reads its port once and follows its log level as it changes; SIGTERM or SIGINT stops it
// gracefully, saving any unsaved settings first (SettingsStoreService).
import Configuration
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import ServiceLifecycle
import Settings
import SettingsConfiguration
import UnixSignals

/// Writes one line to standard output at once (unbuffered, for whoever reads it through a pipe).
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBufferPointer { _ = write(1, $0.baseAddress, $0.count) }
}

let store = SettingsStore.shared
let logger = Logger(label: "settings-config-demo")
store.logDiagnostics(to: logger)
let config = ConfigReader(providers: [
    CommandLineArgumentsProvider(),
    EnvironmentVariablesProvider(),
    SettingsProvider(store: store),
])

/// The service: serves on its port (here it only says so) and follows the log level.
struct DemoServer: Service {
    let config: ConfigReader
    let store: SettingsStore

    func run() async throws {
        let port = config.int(forKey: "http.port", default: 8080)
        say("listening on port \(port) (settings file: \(store.url?.path ?? "-"))")
        try await cancelWhenGracefulShutdown {
            try await config.watchString(forKey: "log.level", default: "info") { updates in
                for await level in updates {
                    var log = logger
                    log.logLevel = Logger.Level(rawValue: level) ?? .info
                    say("log level: \(level)")
                    log.debug("debug logging is on")
                }
            }
        }
        say("stopping")
    }
}

let group = ServiceGroup(configuration: ServiceGroupConfiguration(
    services: [
        .init(service: DemoServer(config: config, store: store)),
        .init(service: SettingsStoreService(logger: logger)),
    ],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: logger))
try await group.run()
say("stopped")
