// swift-tools-version:6.1
import PackageDescription

// HeraldKit's development package: the library's tests and its example, on the sources the
// repository's root Package.swift makes the product `HeraldKit` of (apps add that one, by the
// repository's URL or path: README.md). On Apple platforms HeraldKit needs nothing but
// Foundation (URLSession); on Linux, with the trait `NIOTransports` (on here by default),
// SwiftNIO for HTTP and the WebSocket (Foundation's networking there needs libcurl, and
// Debian's has no WebSocket support).

let package = Package(
    name: "HeraldKit",
    platforms: [.iOS(.v16), .macOS(.v13)],
    products: [
        .library(name: "HeraldKit", targets: ["HeraldKit"]),
        .executable(name: "herald-chat", targets: ["herald-chat"])
    ],
    traits: [
        .trait(name: "NIOTransports", description: "SwiftNIO's HTTP and WebSocket clients, for Linux"),
        .default(enabledTraits: ["NIOTransports"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6")
    ],
    targets: [
        .target(
            name: "HeraldKit",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["NIOTransports"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["NIOTransports"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["NIOTransports"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["NIOTransports"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux], traits: ["NIOTransports"]))
            ]
        ),
        // A terminal chat built only on the library (README.md).
        .executableTarget(name: "herald-chat", dependencies: ["HeraldKit"], path: "Examples/herald-chat"),
        // The pure parts: the session's state machine, backoff, statuses, frames, the outbox's file.
        .testTarget(name: "HeraldKitTests", dependencies: ["HeraldKit"]),
        // Against a real `herald serve` (HERALD_BINARY, HERALD_DATABASE_URL; scripts/client-test).
        .testTarget(name: "HeraldKitServerTests", dependencies: ["HeraldKit"])
    ],
    swiftLanguageModes: [.v6]
)
