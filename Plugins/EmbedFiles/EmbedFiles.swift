import Foundation
import PackagePlugin

/// Embeds a top-level folder of the package into the target that uses this plugin, so the
/// `herald` binary carries its migrations (and later its templates) wherever it is copied.
///
/// `HeraldStore` gets `sql/` as `EmbeddedFiles.sql`; `HeraldAPI` gets `openapi/`, the API's
/// contract, as `EmbeddedFiles.openapi`; `HeraldConsole` its pages and style sheet, `console/`.
@main
struct EmbedFiles: BuildToolPlugin {
    private static let folders: [String: String] = [
        "HeraldStore": "sql",
        "HeraldTemplates": "templates",
        "HeraldAPI": "openapi",
        "HeraldConsole": "console",
    ]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let folder = Self.folders[target.name] else { return [] }
        let directory = context.package.directoryURL.appending(path: folder)
        let output = context.pluginWorkDirectoryURL.appending(path: "Embedded_\(folder).swift")
        // The folder itself is an input too: adding a file changes its modification time,
        // which makes the build embed again even when SwiftPM reuses this list.
        let inputs = [directory] + Self.files(under: directory)
        return [
            .buildCommand(
                displayName: "Embedding \(folder)/ into \(target.name)",
                executable: try context.tool(named: "EmbedFilesTool").url,
                arguments: [folder, directory.path, output.path],
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }

    private static func files(under directory: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else {
            return []
        }
        var found: [URL] = []
        for case let url as URL in walker where !url.hasDirectoryPath {
            found.append(url)
        }
        return found
    }
}
