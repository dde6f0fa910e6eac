import Foundation

/// How Herald writes JSON wherever it leaves Herald (the API's objects, live frames, webhook
/// bodies, `--json`, and the JSON it stores): keys in sorted order, `/` unescaped, instants in
/// RFC 3339 (UTC, proleptic Gregorian), and every UUID in lower case, as RFC 9562 writes them
/// (`JSONEncoder` writes `uuidString`, in upper case, and offers no way to change it). Reading
/// accepts either case. `JSONWritable` types write the same bytes by hand.
public struct HeraldJSONEncoder: Sendable {
    /// How instants are written.
    public enum Dates: Sendable {
        /// `2026-11-22T09:30:00Z`, to the second: what leaves Herald.
        case rfc3339
        /// Seconds since 2001-01-01 as a number, to the microsecond and beyond: JSON Herald
        /// stores and reads back itself (`JSONDecoder`'s default, the form rows hold already).
        case referenceSeconds
    }

    /// Indented, two spaces a level (the CLI's `--json`).
    public var pretty: Bool
    public var dates: Dates

    public init(pretty: Bool = false, dates: Dates = .rfc3339) {
        self.pretty = pretty
        self.dates = dates
    }

    /// `value` as JSON. - Throws: `EncodingError` for a number JSON cannot carry (NaN, ±∞), or
    /// whatever the value's own `encode(to:)` throws.
    public func encode<Value: Encodable>(_ value: Value) throws -> Data {
        Data(try bytes(value))
    }

    /// `value` as JSON text.
    public func string<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try bytes(value), as: UTF8.self)
    }

    public func bytes<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let root = JSONNode.Reference()
        try JSONTreeEncoder(root, codingPath: [], dates: dates).encodeValue(value)
        var writer = JSONWriter()
        writer.node(root.node, indent: pretty ? 0 : nil)
        return writer.bytes
    }
}

/// The `Encoder` behind `HeraldJSONEncoder`: builds a `JSONNode` tree.
private struct JSONTreeEncoder: Encoder {
    let reference: JSONNode.Reference
    let codingPath: [any CodingKey]
    let dates: HeraldJSONEncoder.Dates
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ reference: JSONNode.Reference, codingPath: [any CodingKey], dates: HeraldJSONEncoder.Dates) {
        self.reference = reference
        self.codingPath = codingPath
        self.dates = dates
    }

    /// An encoder of the same kind at `reference`.
    func at(_ reference: JSONNode.Reference, _ codingPath: [any CodingKey]) -> JSONTreeEncoder {
        JSONTreeEncoder(reference, codingPath: codingPath, dates: dates)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        reference.makeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self, reference: reference, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        reference.makeArray()
        return UnkeyedContainer(encoder: self, reference: reference, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(encoder: self, reference: reference, codingPath: codingPath)
    }

    /// Writes `value` here: the types JSON has no form for as Herald writes them, or the
    /// value's own encoding.
    func encodeValue<Value: Encodable>(_ value: Value) throws {
        switch value {
        case let id as UUID: reference.storage = .value(.string(id.lowercasedString))
        case let instant as Date:
            switch dates {
            case .rfc3339: reference.storage = .value(.string(CivilCalendar.iso8601(instant)))
            case .referenceSeconds: reference.storage = .value(try Self.number(instant.timeIntervalSinceReferenceDate, at: codingPath))
            }
        case let url as URL: reference.storage = .value(.string(url.absoluteString))
        case let data as Data: reference.storage = .value(.string(data.base64EncodedString()))
        case let decimal as Decimal: reference.storage = .value(.number(decimal.description))
        default: try value.encode(to: self)
        }
    }

    static func number<Number: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Number, at path: [any CodingKey]) throws -> JSONNode {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "\(value) is not a JSON number"))
        }
        var text = value.description
        // As JSONEncoder writes them: 2.0 is `2`, 1e+20 is `1e+20`.
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .number(text)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: JSONTreeEncoder
    let reference: JSONNode.Reference
    let codingPath: [any CodingKey]

    private func child(_ key: Key) -> JSONNode.Reference {
        let child = JSONNode.Reference()
        reference.set(key.stringValue, child)
        return child
    }

    private func put(_ node: JSONNode, _ key: Key) {
        child(key).storage = .value(node)
    }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        put(try JSONTreeEncoder.number(value, at: codingPath + [key]), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        put(try JSONTreeEncoder.number(value, at: codingPath + [key]), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.number("\(value)"), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.number("\(value)"), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.number("\(value)"), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.number("\(value)"), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.number("\(value)"), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(.number("\(value)"), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.number("\(value)"), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.number("\(value)"), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.number("\(value)"), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(.number("\(value)"), key) }

    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        try encoder.at(child(key), codingPath + [key]).encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = child(key)
        child.makeObject()
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, reference: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = child(key)
        child.makeArray()
        return UnkeyedContainer(encoder: encoder, reference: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        encoder.at(child(Key(stringValue: "super") ?? Self.anyKey()), codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.at(child(key), codingPath + [key])
    }

    /// A key whose type has no `super` (the encoding still goes somewhere).
    private static func anyKey() -> Key {
        Key(intValue: 0) ?? Key(stringValue: "")!
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: JSONTreeEncoder
    let reference: JSONNode.Reference
    let codingPath: [any CodingKey]
    var count: Int { reference.count }

    private func child() -> JSONNode.Reference {
        let child = JSONNode.Reference()
        reference.append(child)
        return child
    }

    private func put(_ node: JSONNode) {
        child().storage = .value(node)
    }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(try JSONTreeEncoder.number(value, at: codingPath)) }
    mutating func encode(_ value: Float) throws { put(try JSONTreeEncoder.number(value, at: codingPath)) }
    mutating func encode(_ value: Int) throws { put(.number("\(value)")) }
    mutating func encode(_ value: Int8) throws { put(.number("\(value)")) }
    mutating func encode(_ value: Int16) throws { put(.number("\(value)")) }
    mutating func encode(_ value: Int32) throws { put(.number("\(value)")) }
    mutating func encode(_ value: Int64) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt8) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt16) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt32) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt64) throws { put(.number("\(value)")) }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        try encoder.at(child(), codingPath).encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = child()
        child.makeObject()
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, reference: child, codingPath: codingPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = child()
        child.makeArray()
        return UnkeyedContainer(encoder: encoder, reference: child, codingPath: codingPath)
    }

    mutating func superEncoder() -> any Encoder {
        encoder.at(child(), codingPath)
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let encoder: JSONTreeEncoder
    let reference: JSONNode.Reference
    let codingPath: [any CodingKey]

    private func put(_ node: JSONNode) {
        reference.storage = .value(node)
    }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(try JSONTreeEncoder.number(value, at: codingPath)) }
    mutating func encode(_ value: Float) throws { put(try JSONTreeEncoder.number(value, at: codingPath)) }
    mutating func encode(_ value: Int) throws { put(.number("\(value)")) }
    mutating func encode(_ value: Int8) throws { put(.number("\(value)")) }
    mutating func encode(_ value: Int16) throws { put(.number("\(value)")) }
    mutating func encode(_ value: Int32) throws { put(.number("\(value)")) }
    mutating func encode(_ value: Int64) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt8) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt16) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt32) throws { put(.number("\(value)")) }
    mutating func encode(_ value: UInt64) throws { put(.number("\(value)")) }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        try encoder.at(reference, codingPath).encodeValue(value)
    }
}
