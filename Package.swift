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
        .library(name: "HeraldHTTP", targets: ["HeraldHTTP"]),
        .library(name: "HeraldPush", targets: ["HeraldPush"]),
        .library(name: "HeraldStore", targets: ["HeraldStore"]),
        .library(name: "HeraldDispatch", targets: ["HeraldDispatch"]),
        .library(name: "HeraldRuntime", targets: ["HeraldRuntime"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1")
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
        .systemLibrary(
            name: "CHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev", "libssl-dev"])]
        ),

        // posix_spawn with the GNU extensions Swift's Glibc module leaves out.
        .target(name: "CSpawn"),

        // Build-time embedding of sql/ (and later templates/) into the binary.
        .executableTarget(name: "EmbedFilesTool"),
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["EmbedFilesTool"]),

        // What every long-running loop shares: the pause before a retry, and a repeated
        // failure logged once with a count rather than once a turn.
        .target(name: "HeraldLoops", dependencies: [.product(name: "Logging", package: "swift-log")]),
        .target(
            name: "HeraldPostgres",
            dependencies: [
                "CLibPQ",
                "HeraldLoops",
                // For its calendar arithmetic only (CivilCalendar); HeraldCore depends on nothing.
                "HeraldCore",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log")
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
            name: "HeraldHTTP",
            dependencies: [
                "CCurl", "CHTTP2", .product(name: "CoreMetrics", package: "swift-metrics"), .product(name: "Logging", package: "swift-log")
            ]
        ),
        .target(
            name: "HeraldPush",
            dependencies: [
                "HeraldCore",
                "HeraldHTTP",
                "HeraldTemplates",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto")
            ]
        ),
        // Webhooks for tenants' backends (docs/webhooks.md): signing, secrets, where they may send,
        // the events of the durable feed, and the sender that leases and posts them.
        .target(
            name: "HeraldWebhooks",
            dependencies: [
                "HeraldLoops",
                "HeraldCore",
                "HeraldStore",
                "HeraldHTTP",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        .target(
            name: "HeraldEmulator",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                "HeraldCore",
                "HeraldHTTP",
                "HeraldPush",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP2", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto")
            ]
        ),
        // A PostgreSQL cluster of Herald's own, under HERALD_HOME (process management only).
        .target(
            name: "HeraldCluster",
            dependencies: ["HeraldPostgres", "CSpawn", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "HeraldStore",
            dependencies: [
                "HeraldCore",
                "HeraldTemplates",
                "HeraldPostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto")
            ],
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "HeraldDispatch",
            dependencies: [
                "HeraldLoops",
                "HeraldCore",
                "HeraldStore",
                "HeraldTemplates",
                "HeraldPush",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // Prometheus text for what the libraries record through swift-metrics: the registry a
        // process bootstraps once, and the /metrics, /healthz and /readyz answers.
        .target(
            name: "HeraldMetrics",
            dependencies: [
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // Composition: Herald put together from the environment (database → store → providers →
        // dispatcher → services). Production code: it does not link the emulator.
        .target(
            name: "HeraldRuntime",
            dependencies: [
                "HeraldCore",
                "HeraldCluster",
                "HeraldDispatch",
                "HeraldHTTP",
                "HeraldPostgres",
                "HeraldPush",
                "HeraldStore",
                "HeraldWebhooks",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ]
        ),
        // The live channel (docs/live-protocol.md) apart from its connections: the hub and its state
        // machine, the rounds that read the feed, presence, each socket's decisions and frames.
        .target(
            name: "HeraldLive",
            dependencies: [
                "HeraldCore",
                "HeraldLoops",
                "HeraldStore",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ]
        ),
        // The HTTP API of `herald serve` (docs/api.md): routes, authentication, problem documents,
        // and the live channel's WebSocket upgrade and frame codec.
        .target(
            name: "HeraldAPI",
            dependencies: [
                "HeraldLive",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"), .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                "HeraldCore",
                "HeraldMetrics",
                "HeraldStore",
                "HeraldWebhooks",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log")
            ],
            plugins: ["EmbedFiles"]
        ),
        // The admin console (/console): server-rendered pages over the store, served by herald serve.
        .target(
            name: "HeraldConsole",
            dependencies: [
                "HeraldCore",
                "HeraldStore",
                "HeraldAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Logging", package: "swift-log")
            ],
            plugins: ["EmbedFiles"]
        ),
        // The scenarios `herald bench` runs, and the live channel's client (the demo's too).
        .target(
            name: "HeraldBench",
            dependencies: [
                "HeraldPush",
                "HeraldRuntime",
                "HeraldCore",
                "HeraldDispatch",
                "HeraldEmulator",
                "HeraldHTTP",
                "HeraldStore",
                "HeraldWebhooks",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio")
            ]
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldAPI",
                "HeraldConsole",
                "HeraldBench",
                "HeraldCluster",
                "HeraldCore",
                "HeraldRuntime",
                "HeraldStore",
                "HeraldTemplates",
                "HeraldEmulator",
                "HeraldHTTP",
                "HeraldLive",
                "HeraldPush",
                "HeraldDispatch",
                "HeraldMetrics",
                "HeraldWebhooks",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),

        // Shared by every test target, and needing nothing but swift-log: a manual clock, instants, the CLI
        // fixture, a log to read back.
        .target(name: "HeraldTesting", dependencies: [.product(name: "Logging", package: "swift-log")], path: "Tests/HeraldTesting"),
        // Shared by the test targets only: a throwaway database per test.
        .target(
            name: "HeraldTestSupport",
            dependencies: [.product(name: "Logging", package: "swift-log"), "HeraldCluster", "HeraldPostgres", "HeraldStore"],
            path: "Tests/HeraldTestSupport"
        ),
        .testTarget(name: "CCurlTests", dependencies: ["CCurl"]),
        .testTarget(name: "HeraldCoreTests", dependencies: ["HeraldCore", "HeraldTesting"]),
        .testTarget(name: "HeraldLoopsTests", dependencies: ["HeraldLoops", "HeraldTesting"]),
        .testTarget(name: "HeraldLiveTests", dependencies: ["HeraldLive", "HeraldCore", "HeraldStore", "HeraldTesting"]),
        .testTarget(name: "HeraldHTTPTests", dependencies: ["HeraldHTTP"]),
        .testTarget(name: "HeraldWebhooksTests", dependencies: ["HeraldWebhooks", "HeraldCore"]),
        .testTarget(
            name: "HeraldEmulatorTests",
            dependencies: [
                "HeraldCore", "HeraldTemplates", .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
                "HeraldEmulator", "HeraldHTTP", "HeraldPush", "HeraldTestSupport", .product(name: "_CryptoExtras", package: "swift-crypto")
            ]
        ),
        .testTarget(name: "HeraldTemplatesTests", dependencies: ["HeraldCore", "HeraldTemplates", "HeraldTesting"]),
        .testTarget(name: "HeraldBenchTests", dependencies: ["HeraldBench", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(
            name: "HeraldAPITests",
            dependencies: [
                "HeraldPostgres",
                "HeraldAPI", "HeraldBench", "HeraldCore", "HeraldStore", "HeraldHTTP", "HeraldEmulator", "HeraldLive", "HeraldTestSupport",
                "HeraldTesting",
                "HeraldWebhooks",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio")
            ]
        ),
        .testTarget(
            name: "HeraldConsoleTests",
            dependencies: [
                "HeraldAPI", "HeraldConsole", "HeraldCore", "HeraldStore", "HeraldTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types")
            ]
        ),
        .testTarget(
            name: "HeraldPushTests",
            dependencies: [
                "HeraldTemplates",
                "HeraldPush",
                "HeraldTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto")
            ]
        ),
        .testTarget(name: "HeraldPostgresTests", dependencies: ["HeraldPostgres", "HeraldTestSupport", "HeraldTesting"]),
        .testTarget(
            name: "HeraldStoreTests",
            dependencies: ["HeraldPostgres", "HeraldTemplates", "HeraldCluster", "HeraldCore", "HeraldRuntime", "HeraldStore", "HeraldTestSupport"]),
        .testTarget(
            name: "HeraldDispatchTests",
            dependencies: [
                "HeraldCore", "HeraldPostgres", "HeraldTemplates",
                "HeraldCluster", "HeraldDispatch", "HeraldLoops", "HeraldStore", "HeraldEmulator", "HeraldHTTP", "HeraldPush", "HeraldRuntime",
                "HeraldTestSupport", "HeraldWebhooks",
                "HeraldTesting",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        .testTarget(
            name: "HeraldCLITests",
            dependencies: [
                "HeraldCore", "HeraldPostgres",
                "herald", "HeraldCluster", "HeraldStore", "HeraldEmulator", "HeraldHTTP", "HeraldTestSupport", "HeraldTesting", "CSpawn",
                .product(name: "Crypto", package: "swift-crypto")
            ])
    ],
    swiftLanguageModes: [.v6]
)
