import Foundation
import HeraldCore
import Testing

/// Herald's JSON reader (`JSONNode.parse`) against Foundation's `JSONDecoder`: the same
/// documents read, the same values in them, the same ones refused.
struct JSONNodeParserTests {
    /// Foundation's reading of a document, numbers as doubles: what `JSONNode` is compared with.
    enum Reference: Decodable, Equatable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([Reference])
        case object([String: Reference])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([Reference].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: Reference].self))
            }
        }

        init?(_ node: JSONNode) {
            switch node {
            case .null: self = .null
            case .bool(let value): self = .bool(value)
            case .number(let text):
                guard let value = Double(text) else { return nil }
                self = .number(value)
            case .string(let text): self = .string(text)
            case .array(let items):
                let mapped = items.compactMap(Reference.init)
                guard mapped.count == items.count else { return nil }
                self = .array(mapped)
            case .object(let members):
                let mapped = members.compactMapValues(Reference.init)
                guard mapped.count == members.count else { return nil }
                self = .object(mapped)
            }
        }
    }

    /// Where Foundation's reader departs from RFC 8259 and Herald's follows it (each checked in
    /// `whereFoundationDepartsFromTheRFCHeraldFollowsIt`): Foundation takes a comma before `]`
    /// or `}` and a byte order mark, and refuses a zero with an exponent (`0E2`).
    static func foundationDeparts(_ text: String) -> Bool {
        text.hasPrefix("\u{FEFF}") || text.range(of: #",\s*[\]}]"#, options: .regularExpression) != nil
            || text.range(of: #"(^|[^0-9.])-?0[eE]"#, options: .regularExpression) != nil
    }

    /// Whether Herald reads `text` as Foundation does; false (unchecked) where Foundation departs.
    @discardableResult
    func agree(_ text: String) -> Bool {
        guard !Self.foundationDeparts(text) else { return false }
        let foundation = try? JSONDecoder().decode(Reference.self, from: Data(text.utf8))
        let herald = JSONNode.parse(text)
        #expect(herald.flatMap(Reference.init) == foundation, "\(text.debugDescription)")
        if herald != nil { #expect(Reference(herald ?? .null) != nil, "a number Herald kept that is none: \(text.debugDescription)") }
        return true
    }

    @Test func documentsAreReadAsFoundationReadsThem() {
        for text in [
            #"{}"#, #"[]"#, #" { "a" : [ 1 , -2.5e3 , true , false , null , "x" ] } "#, "\t\r\n{\"a\":{}}\n",
            #"{"type":"presence.subscribe","people":["a@b.test","c@d.test"]}"#, #""plain""#, "0", "-0", "12", "1.25", "1E+2", "1e-2",
            #""\"\\\/\b\f\n\r\t""#, #""\u00e9\u4E2D\uD83D\uDE00""#, #""é中😀""#, #""\u0000""#, #"{"a":1,"b":[{"c":[[]]}]}"#,
            // Refused by both.
            "", " ", "{", "}", "{,\"a\":1}", "[,1]", "{\"a\"}", "{\"a\":}", "{a:1}", "{'a':1}", "[1 2]", "{\"a\":1 \"b\":2}",
            "01", "1.", ".5", "-", "+1", "1e", "1e+", "--1", "0x10", "NaN", "Infinity", "tru", "truee", "nul", "[true false]", "{}x", "{} {}",
            #""abc"#, #""\x""#, #""\u12""#, #""\u12G4""#, "\"a\nb\"", "\"a\tb\"", "\"\u{01}\"", "[\"\\\"]"
        ] {
            #expect(agree(text), "\(text.debugDescription) is not compared")
        }
    }

    /// Random documents, each written with random white space and escapes, then damaged a few
    /// bytes at a time: every one read as Foundation reads it, or refused as it is.
    @Test func randomDocumentsAndTheirDamageAgree() {
        var random = SeededRandom(state: 0x4865_7261_6C64)
        let pieces = ["{", "}", "[", "]", ",", ":", "\"", "\\", "u", "0", "1", "-", ".", "e", " ", "n", "t", "\u{1}", "é", "😀"]
        var compared = 0
        for _ in 0..<2_000 {
            let text = random.document(depth: 0)
            #expect(agree(text), "\(text.debugDescription) is not compared")
            var damaged = Array(text.unicodeScalars)
            for _ in 0..<random.below(3) + 1 {
                let at = random.below(damaged.count + 1)
                switch random.below(3) {
                case 0: if at < damaged.count { damaged.remove(at: at) }
                case 1: damaged.insert(contentsOf: pieces[random.below(pieces.count)].unicodeScalars, at: at)
                default: if at < damaged.count { damaged[at] = pieces[random.below(pieces.count)].unicodeScalars.first ?? " " }
                }
            }
            if agree(String(String.UnicodeScalarView(damaged))) { compared += 1 }
        }
        #expect(compared > 1_800, "only \(compared) damaged documents compared")
    }

    @Test func whereFoundationDepartsFromTheRFCHeraldFollowsIt() {
        for text in ["[1,]", "[1 , ]", #"{"a":1,}"#, "\u{FEFF}{}"] {
            #expect(Self.foundationDeparts(text) && JSONNode.parse(text) == nil, "\(text.debugDescription)")
        }
        #expect(JSONNode.parse("0E2") == .number("0E2") && JSONNode.parse("[-0e-1]") == .array([.number("-0e-1")]))
        #expect(Self.foundationDeparts("0E2") && Self.foundationDeparts("[-0e-1]") && !Self.foundationDeparts("10E2"))
    }

    /// What Herald decides where JSON leaves it open, or where it stops earlier than Foundation.
    @Test func lonesSurrogatesDeepNestingAndRepeatedKeys() {
        #expect(JSONNode.parse(#""\uD800""#) == nil && JSONNode.parse(#""\uDC00x""#) == nil && JSONNode.parse(#""\uD800\u0041""#) == nil)
        #expect(JSONNode.parse(#""\uD83D\uDE00""#) == .string("😀"))
        let deepest = String(repeating: "[", count: JSONNode.maxDepth) + String(repeating: "]", count: JSONNode.maxDepth)
        #expect(JSONNode.parse(deepest) != nil)
        #expect(JSONNode.parse("[" + deepest + "]") == nil)
        // Far deeper than any stack: refused at the limit, not a crash.
        #expect(JSONNode.parse(String(repeating: "[{\"a\":", count: 200_000)) == nil)
        #expect(JSONNode.parse(#"{"a":1,"a":2}"#) == .object(["a": .number("1")]), "the first, as Foundation reads it")
        #expect(JSONNode.parse("-1.50E+03") == .number("-1.50E+03"), "a number keeps its text")
        #expect(JSONNode.number("2.0").integer == 2 && JSONNode.number("2e0").integer == 2 && JSONNode.number("2.5").integer == nil)
        #expect(JSONNode.number("9223372036854775807").integer == Int64.max && JSONNode.number("1e300").integer == nil)
        #expect(JSONNode.parse("1e309") == nil && JSONNode.parse("-1e309") == nil && JSONNode.parse("1e-400") == .number("1e-400"))
    }
}

/// Random JSON documents from the seeded generator (`RetryPolicyTests`).
extension SeededRandom {
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }

    mutating func space() -> String { ["", "", " ", "\n", "\t ", "\r\n"][below(6)] }

    mutating func string() -> String {
        let scalars: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{7F}", "é", "中", "😀", "\u{2028}"]
        var text = "\""
        for _ in 0..<below(8) {
            let scalar = scalars[below(scalars.count)]
            switch (scalar, below(3)) {
            case ("\"", _): text += "\\\""
            case ("\\", _): text += "\\\\"
            case ("\n", _): text += "\\n"
            case ("\t", _): text += "\\t"
            case ("\u{1}", _): text += "\\u0001"
            case ("😀", 0): text += "\\ud83d\\ude00"
            case (_, 0) where scalar.value < 0x10000: text += String(format: "\\u%04X", scalar.value)
            case ("/", 1): text += "\\/"
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    mutating func number() -> String {
        [
            "0", "-0", "7", "-13", "1.5", "2.25e3", "-4E-2", "123456789012", "9007199254740993", "1e22", "0.000001"
        ][below(11)]
    }

    mutating func document(depth: Int) -> String {
        switch depth >= 3 ? below(4) : below(6) {
        case 0: return ["null", "true", "false"][below(3)]
        case 1: return number()
        case 2, 3: return string()
        case 4:
            let items = (0..<below(4)).map { _ in space() + document(depth: depth + 1) + space() }
            return "[" + items.joined(separator: ",") + (items.isEmpty ? space() : "") + "]"
        default:
            // Keys distinct: what a repeated key means is Herald's own choice (tested apart).
            var keys: Set<String> = []
            let members = (0..<below(4)).compactMap { _ -> String? in
                let key = string()
                guard keys.insert(key).inserted else { return nil }
                return space() + key + space() + ":" + space() + document(depth: depth + 1) + space()
            }
            return "{" + members.joined(separator: ",") + "}"
        }
    }
}
