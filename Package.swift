// swift-tools-version: 6.0
import PackageDescription

/// Upcoming language features enabled for every target, one per line with the reason.
let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),           // `any P` spelled out: existential cost is visible
    .enableUpcomingFeature("MemberImportVisibility"),   // members need their module imported
    .enableUpcomingFeature("InternalImportsByDefault"), // imports are not re-exported by accident
]

let package = Package(
    name: "Settings",
    // What the APIs need on Apple platforms: `Mutex` and `Atomic` (Synchronization) and
    // `Observation`'s `ObservationRegistrar` on every store. Linux needs only Swift 6.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Settings", targets: ["Settings"]),
        .library(name: "SettingsPlist", targets: ["SettingsPlist"]),
        .executable(name: "settings", targets: ["settings"]),
        .executable(name: "SettingsExample", targets: ["SettingsExample"]),
        .executable(name: "settings-bench", targets: ["settings-bench"]),
        .executable(name: "settings-fault", targets: ["settings-fault"]),
        .executable(name: "settings-startup", targets: ["settings-startup"]),
        .executable(name: "empty-program", targets: ["empty-program"]),
    ],
    targets: [
        .target(name: "SettingsPlist", swiftSettings: upcoming),
        .target(name: "Settings", dependencies: ["SettingsPlist"], swiftSettings: upcoming),
        .executableTarget(name: "settings", dependencies: ["SettingsPlist"], swiftSettings: upcoming),  // the tool edits files itself, under the library's lock: it loads no Observation or Dispatch
        .executableTarget(
            name: "SettingsExample",
            dependencies: ["Settings", "SettingsPlist"],
            exclude: ["Defaults.plist", "Overrides.plist"],  // read from beside the source at run time
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "settings-bench",
            dependencies: ["SettingsPlist", "Settings"],
            path: "Benchmarks/settings-bench",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "settings-startup",
            dependencies: ["Settings"],
            path: "Benchmarks/settings-startup",
            swiftSettings: upcoming
        ),
        .executableTarget(name: "empty-program", path: "Benchmarks/empty-program", swiftSettings: upcoming),
        .executableTarget(
            name: "settings-fault",
            dependencies: ["Settings"],
            path: "Tools/settings-fault",
            swiftSettings: upcoming
        ),
        .testTarget(name: "SettingsPlistTests", dependencies: ["SettingsPlist"], swiftSettings: upcoming),
        .testTarget(name: "SettingsTests", dependencies: ["Settings"], swiftSettings: upcoming),
        .testTarget(name: "SettingsCLITests", dependencies: ["SettingsPlist"], swiftSettings: upcoming),
        // The guides' ```swift blocks, extracted by Tools/extract-doc-blocks.py: a wrong sample fails the build.
        .testTarget(name: "DocBlocksTests", dependencies: ["Settings"], swiftSettings: upcoming),
    ],
    swiftLanguageModes: [.v6]
)
