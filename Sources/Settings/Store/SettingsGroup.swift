import Synchronization

/// Marks a type whose settings belong to the container that holds it, so reflection
/// (``SettingsStore/bind(_:to:)``, missing-default warnings) looks inside it.
///
/// ```swift
/// struct NetworkSettings: SettingsGroup { @Setting("Network/timeout", default: 30.0) var timeout: Double }
/// struct AppSettings { var network = NetworkSettings() }
/// ```
public protocol SettingsGroup {}

/// A property wrapper that reflection recognises as a setting.
protocol SettingRepresentable {
    var settingBox: any AnySettingBox { get }
}
