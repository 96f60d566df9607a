// swift-tools-version: 6.0
import PackageDescription

/// The same upcoming features as the root package.
let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "SettingsPostgres",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SettingsPostgres", targets: ["SettingsPostgres"]),
        .executable(name: "settings-sync-demo", targets: ["settings-sync-demo"]),
        .executable(name: "settings-sync-device", targets: ["settings-sync-device"]),
        .executable(name: "settings-sync-admin", targets: ["settings-sync-admin"]),
    ],
    dependencies: [
        .package(name: "Settings", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "SettingsPostgres",
            dependencies: [
                .product(name: "Settings", package: "Settings"),
                .product(name: "SettingsPlist", package: "Settings"),
                .product(name: "SettingsFiles", package: "Settings"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "settings-sync-admin",
            dependencies: [
                "SettingsPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "settings-sync-device",
            dependencies: [
                "SettingsPostgres",
                .product(name: "Settings", package: "Settings"),
                .product(name: "SettingsPlist", package: "Settings"),
                .product(name: "SettingsFiles", package: "Settings"),
            ],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "settings-sync-demo",
            dependencies: [
                "SettingsPostgres",
                .product(name: "Settings", package: "Settings"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "SettingsPostgresTests",
            dependencies: [
                "SettingsPostgres",
                .product(name: "Settings", package: "Settings"),
                .product(name: "SettingsPlist", package: "Settings"),
                .product(name: "SettingsFiles", package: "Settings"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)
