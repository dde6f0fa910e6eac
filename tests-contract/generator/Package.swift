// swift-tools-version:6.0
// swift-openapi-generator's command, built by scripts/openapi-generate to read
// openapi/openapi.json as a client's code generator reads it. Nothing here is Herald's code.
import PackageDescription

let package = Package(
    name: "OpenAPIGeneratorCheck",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3")],
    targets: []
)
