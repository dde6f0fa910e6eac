// swift-tools-version:6.1
import PackageDescription

// Two things live here (docs/contributing.md):
// - HeraldKit, the client library apps add by this repository's URL or path
//   (clients/swift/README.md). It is all an app resolves: with no trait enabled, none of the
//   server's packages is fetched, and on Apple platforms HeraldKit needs nothing but Foundation.
//   On Linux, the trait `NIOTransports` gives it SwiftNIO's HTTP and WebSocket clients.
// - Herald, the server, behind the trait `Server`, which the scripts enable
//   (`swift build --traits Server`): every package only the server uses is a dependency of a
//   target under that trait, so that an app resolving the repository does not fetch it.

/// A product of a package only the server uses.
func server(_ name: String, _ package: String) -> Target.Dependency {
    .product(name: name, package: package, condition: .when(traits: ["Server"]))
}

let package = Package(
    name: "Herald",
    // HeraldKit's platforms (the server runs on Linux only: it needs epoll).
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "HeraldKit", targets: ["HeraldKit"]),
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
    traits: [
        .trait(name: "Server", description: "Herald itself: the server, its CLI, its tests and benchmarks"),
        .trait(name: "NIOTransports", description: "HeraldKit's SwiftNIO transports, for Linux (where URLSession has no WebSocket)"),
        .default(enabledTraits: [])
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
        // The client library (clients/swift): its sources, shared with the package there that
        // holds its tests and example.
        .target(
            name: "HeraldKit",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["NIOTransports"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["NIOTransports"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["NIOTransports"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["NIOTransports"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux], traits: ["NIOTransports"]))
            ],
            path: "clients/swift/Sources/HeraldKit"
        ),

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
        .target(name: "HeraldLoops", dependencies: [server("Logging", "swift-log")]),
        .target(
            name: "HeraldPostgres",
            dependencies: [
                "CLibPQ",
                "HeraldLoops",
                // For its calendar arithmetic only (CivilCalendar); HeraldCore depends on nothing.
                "HeraldCore",
                server("CoreMetrics", "swift-metrics"),
                server("Logging", "swift-log")
            ]
        ),
        // Pure domain: no I/O.
        .target(name: "HeraldCore"),
        .target(
            name: "HeraldTemplates",
            dependencies: ["HeraldCore", server("Mustache", "swift-mustache")],
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "HeraldHTTP",
            dependencies: [
                "CCurl", "CHTTP2", server("CoreMetrics", "swift-metrics"), server("Logging", "swift-log")
            ]
        ),
        .target(
            name: "HeraldPush",
            dependencies: [
                "CCurl",
                "HeraldCore",
                "HeraldHTTP",
                "HeraldTemplates",
                server("CoreMetrics", "swift-metrics"),
                server("Crypto", "swift-crypto"),
                server("_CryptoExtras", "swift-crypto")
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
                server("Crypto", "swift-crypto"),
                server("CoreMetrics", "swift-metrics"),
                server("Logging", "swift-log")
            ]
        ),
        .target(
            name: "HeraldEmulator",
            dependencies: [
                server("Logging", "swift-log"),
                "HeraldCore",
                "HeraldHTTP",
                "HeraldPush",
                server("Hummingbird", "hummingbird"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("HummingbirdCore", "hummingbird"),
                server("NIOCore", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOTLS", "swift-nio"),
                server("NIOHTTP2", "swift-nio-http2"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOHTTPTypes", "swift-nio-extras"),
                server("NIOHTTPTypesHTTP1", "swift-nio-extras"),
                server("NIOHTTPTypesHTTP2", "swift-nio-extras"),
                server("HTTPTypes", "swift-http-types"),
                server("NIOSSL", "swift-nio-ssl"),
                server("X509", "swift-certificates"),
                server("SwiftASN1", "swift-asn1"),
                server("Crypto", "swift-crypto"),
                server("_CryptoExtras", "swift-crypto")
            ]
        ),
        // A PostgreSQL cluster of Herald's own, under HERALD_HOME (process management only).
        .target(
            name: "HeraldCluster",
            dependencies: ["HeraldPostgres", "CSpawn", server("Logging", "swift-log")]
        ),
        .target(
            name: "HeraldStore",
            dependencies: [
                "HeraldCore",
                "HeraldTemplates",
                "HeraldPostgres",
                server("Logging", "swift-log"),
                server("Crypto", "swift-crypto")
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
                server("CoreMetrics", "swift-metrics"),
                server("Logging", "swift-log")
            ]
        ),
        // Prometheus text for what the libraries record through swift-metrics: the registry a
        // process bootstraps once, and the /metrics, /healthz and /readyz answers.
        .target(
            name: "HeraldMetrics",
            dependencies: [
                server("CoreMetrics", "swift-metrics"),
                server("Prometheus", "swift-prometheus"),
                server("Hummingbird", "hummingbird"),
                server("Crypto", "swift-crypto"),
                server("Logging", "swift-log")
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
                server("Logging", "swift-log"),
                server("ServiceLifecycle", "swift-service-lifecycle")
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
                server("CoreMetrics", "swift-metrics"),
                server("Logging", "swift-log"),
                server("ServiceLifecycle", "swift-service-lifecycle")
            ]
        ),
        // The HTTP API of `herald serve` (docs/api.md): routes, authentication, problem documents,
        // and the live channel's WebSocket upgrade and frame codec.
        .target(
            name: "HeraldAPI",
            dependencies: [
                "HeraldLive",
                server("CoreMetrics", "swift-metrics"),
                server("NIOConcurrencyHelpers", "swift-nio"), server("NIOHTTP2", "swift-nio-http2"),
                "HeraldCore",
                "HeraldMetrics",
                "HeraldStore",
                "HeraldWebhooks",
                server("Hummingbird", "hummingbird"),
                server("HummingbirdCore", "hummingbird"),
                server("HummingbirdHTTP2", "hummingbird"),
                server("HTTPTypes", "swift-http-types"),
                server("NIOCore", "swift-nio"),
                server("NIOSSL", "swift-nio-ssl"),
                server("NIOTLS", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOWebSocket", "swift-nio"),
                server("NIOHTTPTypes", "swift-nio-extras"),
                server("NIOHTTPTypesHTTP1", "swift-nio-extras"),
                server("Crypto", "swift-crypto"),
                server("Logging", "swift-log"),
                server("ServiceLifecycle", "swift-service-lifecycle")
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
                server("Hummingbird", "hummingbird"),
                server("HTTPTypes", "swift-http-types"),
                server("Mustache", "swift-mustache"),
                server("Logging", "swift-log")
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
                "HeraldTemplates",
                "HeraldWebhooks",
                server("Logging", "swift-log"),
                server("NIOCore", "swift-nio"),
                server("NIOPosix", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOWebSocket", "swift-nio")
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
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("ArgumentParser", "swift-argument-parser"),
                server("Logging", "swift-log")
            ]
        ),

        // Shared by every test target, and needing nothing but swift-log: a manual clock, instants, the CLI
        // fixture, a log to read back.
        .target(name: "HeraldTesting", dependencies: [server("Logging", "swift-log")], path: "Tests/HeraldTesting"),
        // Shared by the test targets only: a throwaway database per test.
        .target(
            name: "HeraldTestSupport",
            dependencies: [server("Logging", "swift-log"), "HeraldCluster", "HeraldPostgres", "HeraldStore"],
            path: "Tests/HeraldTestSupport"
        ),
        .testTarget(name: "CCurlTests", dependencies: ["CCurl"]),
        .testTarget(name: "HeraldCoreTests", dependencies: ["HeraldCore", "HeraldTesting"]),
        .testTarget(name: "HeraldLoopsTests", dependencies: ["HeraldLoops", "HeraldTesting"]),
        .testTarget(name: "HeraldLiveTests", dependencies: ["HeraldLive", "HeraldCore", "HeraldStore", "HeraldTesting", "HeraldTestSupport"]),
        .testTarget(name: "HeraldHTTPTests", dependencies: ["HeraldHTTP"]),
        .testTarget(name: "HeraldWebhooksTests", dependencies: ["HeraldWebhooks", "HeraldCore", "HeraldStore"]),
        .testTarget(
            name: "HeraldEmulatorTests",
            dependencies: [
                "HeraldCore", "HeraldTemplates", server("Crypto", "swift-crypto"), server("Logging", "swift-log"),
                "HeraldEmulator", "HeraldHTTP", "HeraldPush", "HeraldTestSupport", server("_CryptoExtras", "swift-crypto")
            ]
        ),
        .testTarget(name: "HeraldTemplatesTests", dependencies: ["HeraldCore", "HeraldTemplates", "HeraldTesting"]),
        .testTarget(name: "HeraldBenchTests", dependencies: ["HeraldBench", server("Crypto", "swift-crypto")]),
        .testTarget(
            name: "HeraldAPITests",
            dependencies: [
                "HeraldPostgres",
                "HeraldAPI", "HeraldBench", "HeraldCore", "HeraldStore", "HeraldHTTP", "HeraldEmulator", "HeraldLive", "HeraldTestSupport",
                "HeraldTesting", "HeraldDispatch",
                "HeraldWebhooks",
                server("Hummingbird", "hummingbird"),
                server("HummingbirdTesting", "hummingbird"),
                server("HTTPTypes", "swift-http-types"),
                server("NIOCore", "swift-nio")
            ]
        ),
        .testTarget(
            name: "HeraldConsoleTests",
            dependencies: [
                "HeraldAPI", "HeraldConsole", "HeraldCore", "HeraldStore", "HeraldTestSupport",
                server("Hummingbird", "hummingbird"),
                server("HummingbirdTesting", "hummingbird"),
                server("HTTPTypes", "swift-http-types")
            ]
        ),
        .testTarget(
            name: "HeraldPushTests",
            dependencies: [
                "HeraldCore",
                "HeraldTemplates",
                "HeraldPush",
                "HeraldHTTP",
                "HeraldTesting",
                server("Crypto", "swift-crypto"),
                server("_CryptoExtras", "swift-crypto"),
                server("Logging", "swift-log")
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
                server("Logging", "swift-log")
            ]
        ),
        .testTarget(
            name: "HeraldCLITests",
            dependencies: [
                "HeraldCore", "HeraldPostgres",
                "herald", "HeraldCluster", "HeraldStore", "HeraldEmulator", "HeraldHTTP", "HeraldTestSupport", "HeraldTesting", "CSpawn",
                server("Crypto", "swift-crypto")
            ])
    ],
    swiftLanguageModes: [.v6]
)
