import Foundation
import HeraldCore
import Mustache

/// The console's templates (`console/` at the package's top, compiled in): a page extends
/// `layout` and fills its `content`. `{{value}}` is HTML-escaped everywhere; no template
/// uses the unescaped forms.
///
/// The escaping is `HTMLText`'s, by Unicode scalar, and it is set here for every template
/// (each is registered behind a `CONTENT_TYPE` pragma naming it): the library's own HTML
/// escaping compares `Character`s, and a grapheme cluster such as U+0600 + `<` gets past it.
struct Pages: Sendable {
    let library: MustacheLibrary
    let styleSheet: String
    /// The history page's script: it refreshes the page from the live channel.
    let liveScript: String

    /// The content type every console template is rendered in.
    static let contentType = "HERALD_HTML"

    init() throws {
        MustacheContentTypes.register(ScalarHTMLContentType(), named: Self.contentType)
        var library = MustacheLibrary()
        for (name, text) in EmbeddedFiles.console where name.hasSuffix(".mustache") {
            try library.register("{{% CONTENT_TYPE: \(Self.contentType) }}" + text, named: String(name.dropLast(".mustache".count)))
        }
        self.library = library
        styleSheet = EmbeddedFiles.console["console.css"] ?? ""
        liveScript = EmbeddedFiles.console["live.js"] ?? ""
    }

    func render(_ template: String, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: template) ?? ""
    }
}

/// HTML escaping by Unicode scalar (`HTMLText`).
struct ScalarHTMLContentType: MustacheContentType {
    func escapeText(_ text: String) -> String { HTMLText.escaped(text) }
}
