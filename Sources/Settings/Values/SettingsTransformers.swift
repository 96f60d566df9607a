import SettingsPlist
public import Synchronization

/// The global registry of transformers for types you do not own or want stored differently.
///
/// A registered transformer wins over the type's built-in one for every setting that does not
/// name its own transformer.
public enum SettingsTransformers {
    private static let registry = Mutex<[ObjectIdentifier: any Sendable]>([:])
    @usableFromInline static let version = Atomic<UInt64>(0)

    /// Registers `transformer` for its `Value` type, replacing any earlier registration.
    ///
    /// ```swift
    /// SettingsTransformers.register(SettingsTransformer<Date>(typeName: "Date (Unix seconds)",
    ///     encode: { .real($0.timeIntervalSince1970) },
    ///     decode: { $0.doubleValue.map(Date.init(timeIntervalSince1970:)) }))
    /// ```
    ///
    /// - Parameter transformer: the transformer.
    public static func register<Value>(_ transformer: SettingsTransformer<Value>) {
        registry.locked { $0[ObjectIdentifier(Value.self)] = transformer }
        version.add(1, ordering: .releasing)
    }

    /// Removes the registration for `type`, restoring its built-in transformer.
    ///
    /// - Parameter type: the type.
    public static func unregister<Value>(_ type: Value.Type) {
        registry.locked { $0[ObjectIdentifier(Value.self)] = nil }
        version.add(1, ordering: .releasing)
    }

    /// The registered transformer for `type`, if any.
    ///
    /// - Parameter type: the type.
    public static func registered<Value>(for type: Value.Type) -> SettingsTransformer<Value>? {
        registry.locked { $0[ObjectIdentifier(Value.self)] } as? SettingsTransformer<Value>
    }

    /// Changes whenever a registration changes (settings re-resolve their transformer then).
    @inlinable static var currentVersion: UInt64 { version.load(ordering: .acquiring) }
}
