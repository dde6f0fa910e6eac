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

private let upperHexDigits = Array("0123456789ABCDEF".utf8)

/// A path segment as it may appear in a `Location` (or a console link): the unreserved
/// characters, `@` and `:` as they are, every other byte of the UTF-8 as `%XX`
/// (`Parameters.decoded` reads it back).
public func pathSegment(_ text: String) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "@"), UInt8(ascii: ":"):
            bytes.append(byte)
        default:
            bytes.append(contentsOf: [UInt8(ascii: "%"), upperHexDigits[Int(byte >> 4)], upperHexDigits[Int(byte & 0x0F)]])
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}
