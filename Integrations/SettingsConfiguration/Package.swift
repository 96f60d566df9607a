// swift-tools-version: 6.1
import PackageDescription

/// The same upcoming features as the root package.
let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "SettingsConfiguration",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SettingsConfiguration", targets: ["SettingsConfiguration"]),
        .executable(name: "settings-config-demo", targets: ["settings-config-demo"]),
        .executable(name: "settings-config-bench", targets: ["settings-config-bench"]),
    ],
    dependencies: [
        .package(name: "Settings", path: "../.."),
        // CommandLineArguments: the demo's `--port 8080`; the default JSON trait is not needed.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["CommandLineArguments"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "SettingsConfiguration",
            dependencies: [
                .product(name: "Settings", package: "Settings"),
                .product(name: "SettingsPlist", package: "Settings"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "settings-config-demo",
            dependencies: [
                "SettingsConfiguration",
                .product(name: "Settings", package: "Settings"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "settings-config-bench",
            dependencies: [
                "SettingsConfiguration",
                .product(name: "Settings", package: "Settings"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            path: "Benchmarks/settings-config-bench",
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "SettingsConfigurationTests",
            dependencies: [
                "SettingsConfiguration",
                .product(name: "Settings", package: "Settings"),
                .product(name: "SettingsPlist", package: "Settings"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),  // Docs/Configuration.md's samples (GeneratedConfiguration.swift)
            ],
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)
