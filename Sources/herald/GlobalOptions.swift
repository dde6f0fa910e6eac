import ArgumentParser
import Foundation
import HeraldCore

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON document instead of a table.")
    var json = false
}

/// Writes `value` as one JSON document on stdout.
func printJSON<Value: Encodable>(_ value: Value) throws {
    let data = try HeraldJSONEncoder(pretty: true).encode(value)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

/// Prints `label value` pairs with the labels aligned.
func printFields(_ fields: [(String, String)]) {
    let width = fields.map(\.0.count).max() ?? 0
    for (label, value) in fields {
        print(label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value)
    }
}
