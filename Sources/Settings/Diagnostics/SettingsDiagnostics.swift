#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import SettingsFiles

/// Where diagnostics go.
public enum SettingsDiagnostics {
    /// The handler, in a struct: a function value kept directly in a `Mutex` is re-abstracted
    /// each time it passes `inout` through `locked`, and the thunks piled up, so each report
    /// cost more than the one before (430 µs each after 30,000 in a debug build).
    private struct Handler: Sendable {
        let call: @Sendable (SettingsDiagnostic) -> Void
    }

    private static let current = Mutex(Handler(call: standardError))

    /// Receives every diagnostic. The default writes one line to standard error; replace it to
    /// collect, log or silence diagnostics. It is never called while a settings lock is held.
    public static var handler: @Sendable (SettingsDiagnostic) -> Void {
        get { current.locked { $0.call } }
        set { current.locked { $0 = Handler(call: newValue) } }
    }

    /// Writes `diagnostic` to standard error, one line that starts with the program's name
    /// (the name ``SettingsStore/shared`` names its folder after): `MyApp: warning: <message>`.
    public static let standardError: @Sendable (SettingsDiagnostic) -> Void = { diagnostic in
        let line = Array((standardErrorLine(diagnostic) + "\n").utf8)
        line.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count) }
    }

    /// The line ``standardError`` writes for `diagnostic`, without its newline.
    static func standardErrorLine(_ diagnostic: SettingsDiagnostic) -> String {
        "\(programName): \(diagnostic)"
    }

    /// The program's name, worked out once, as provenance records it (`MyApp`, also when it was
    /// started as `/proc/self/exe`).
    static var programName: String { SettingsProvenance.executableName }

    /// Sends `diagnostic` to the handler.
    @usableFromInline
    static func report(_ diagnostic: SettingsDiagnostic) {
        handler(diagnostic)
    }
}
