// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Herald",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "herald", targets: ["herald"]),
        .library(name: "HeraldPostgres", targets: ["HeraldPostgres"]),
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
        .library(name: "HeraldTemplates", targets: ["HeraldTemplates"]),
        .library(name: "HeraldPush", targets: ["HeraldPush"]),
        .library(name: "HeraldStore", targets: ["HeraldStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // C libraries, found through pkg-config.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        // posix_spawn with the GNU extensions Swift's Glibc module leaves out.
        .target(name: "CSpawn"),

        // Build-time embedding of sql/ (and later templates/) into the binary.
        .executableTarget(name: "EmbedFilesTool"),
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["EmbedFilesTool"]),

        .target(
            name: "HeraldPostgres",
            dependencies: [
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Pure domain: no I/O.
        .target(name: "HeraldCore"),
        .target(
            name: "HeraldTemplates",
            dependencies: ["HeraldCore", .product(name: "Mustache", package: "swift-mustache")],
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "HeraldPush",
            dependencies: [
                "HeraldCore",
                "HeraldTemplates",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "HeraldStore",
            dependencies: [
                "HeraldCore",
                "HeraldTemplates",
                "HeraldPostgres",
                "CSpawn",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            plugins: ["EmbedFiles"]
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldCore",
                "HeraldPostgres",
                "HeraldStore",
                "HeraldTemplates",
                "CCurl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Shared by the test targets only: a throwaway database per test.
        .target(
            name: "HeraldTestSupport",
            dependencies: ["HeraldPostgres", "HeraldStore"],
            path: "Tests/HeraldTestSupport"
        ),
        .testTarget(name: "CCurlTests", dependencies: ["CCurl"]),
        .testTarget(name: "HeraldCoreTests", dependencies: ["HeraldCore"]),
        .testTarget(name: "HeraldTemplatesTests", dependencies: ["HeraldTemplates"]),
        .testTarget(
            name: "HeraldPushTests",
            dependencies: [
                "HeraldPush",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(name: "HeraldPostgresTests", dependencies: ["HeraldPostgres", "HeraldTestSupport"]),
        .testTarget(name: "HeraldStoreTests", dependencies: ["HeraldStore", "HeraldTestSupport"]),
        .testTarget(name: "HeraldCLITests", dependencies: ["herald", "HeraldStore", "HeraldTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
