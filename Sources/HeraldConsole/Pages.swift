import Foundation
import Mustache

/// The console's templates (`console/` at the package's top, compiled in): a page extends
/// `layout` and fills its `content`. `{{value}}` is HTML-escaped everywhere; no template
/// uses the unescaped forms.
struct Pages: Sendable {
    let library: MustacheLibrary
    let styleSheet: String

    init() throws {
        var library = MustacheLibrary()
        for (name, text) in EmbeddedFiles.console where name.hasSuffix(".mustache") {
            try library.register(text, named: String(name.dropLast(".mustache".count)))
        }
        self.library = library
        styleSheet = EmbeddedFiles.console["console.css"] ?? ""
    }

    func render(_ template: String, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: template) ?? ""
    }
}
