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

/// A problem the library noticed and did not throw: a setting without a default, a stored value of
/// the wrong type, a rule that refused a write, a file that could not be read.
///
/// Diagnostics go to ``SettingsDiagnostics/handler`` (standard error unless replaced), so programs
/// see them without a logging dependency.
///
/// ```swift
/// SettingsDiagnostics.handler = { diagnostic in myLogger.warning("\(diagnostic)") }
/// ```
public struct SettingsDiagnostic: Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Hashable, Sendable {
        /// A setting has no default in code and none registered.
        case missingDefault
        /// A stored value could not be converted to the setting's type; the default was used.
        case typeMismatch
        /// A rule refused or changed a value being written.
        case ruleApplied
        /// A file could not be read, parsed or written.
        case fileError
        /// A command-line argument or environment variable could not be used.
        case invalidOverride
        /// A write was refused because no reader could read the result back (a key and value
        /// nested deeper than 512 levels, a value larger than the settings file may be); nothing
        /// was changed.
        case writeRefused
        /// A command-line argument, environment variable or override file named a key by an old
        /// name (declared with `formerly:` or ``SettingsStore/registerRename(of:formerly:)``): its
        /// value was applied to the new name. Reported once per old name and layer.
        case deprecatedKey
        /// Renames that cannot all hold: two settings declare the same old name, two renames
        /// would move a value back and forth, or a value under an old name cannot move to its
        /// new name without replacing another value. The old name is left as it is.
        case renameConflict
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// The setting concerned, if any.
    public var key: SettingsKey?
    /// The whole message, naming the key, the source and the types or file involved.
    public var message: String

    /// Creates a diagnostic.
    ///
    /// - Parameters:
    ///   - kind: what kind of problem.
    ///   - key: the setting, if any.
    ///   - message: the full message.
    public init(_ kind: Kind, key: SettingsKey? = nil, _ message: String) {
        self.kind = kind
        self.key = key
        self.message = message
    }

    /// `warning: <message>`. The default handler writes it after the program's name, as
    /// compilers and command-line tools do: `MyApp: warning: <message>`.
    public var description: String { "warning: \(message)" }
}
