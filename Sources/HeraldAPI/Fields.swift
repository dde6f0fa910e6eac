import HeraldCore

/// Checks one field with the core's input rules (the CLI's rules), naming the field in the
/// problem when it is wrong.
func field<Value>(_ name: String, _ check: () throws -> Value) throws -> Value {
    do {
        return try check()
    } catch let error as InputError {
        throw Problem(
            .unprocessableContent, "Invalid fields", detail: error.description, errors: [.init(field: error.field ?? name, detail: error.description)]
        )
    }
}

/// A path segment as it may appear in a `Location`.
func pathSegment(_ text: String) -> String {
    var allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    allowed.formUnion("@:".utf8)
    return text.utf8.map { allowed.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }.joined()
}
