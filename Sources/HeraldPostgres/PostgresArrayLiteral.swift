/// PostgreSQL's text form of one-dimensional arrays: `{a,"b c",NULL}`.
enum PostgresArrayLiteral {
    static func format(_ elements: [String?]) -> String {
        var text = PostgresArrayText(count: elements.count, width: 16)
        for element in elements {
            text.next()
            text.append(quoting: element)
        }
        return text.finish()
    }

    /// Parses a one-dimensional array; `nil` when the text is not one.
    static func parse(_ text: String) -> [String?]? {
        var scalars = Substring(text).unicodeScalars[...]
        // An explicit lower bound, such as `[0:1]={a,b}`, is skipped.
        if scalars.first == "[" {
            guard let equals = scalars.firstIndex(of: "=") else { return nil }
            scalars = scalars[scalars.index(after: equals)...]
        }
        guard scalars.first == "{", scalars.last == "}" else { return nil }
        scalars = scalars.dropFirst().dropLast()
        var elements: [String?] = []
        if scalars.isEmpty { return elements }

        var iterator = scalars.makeIterator()
        var current = String.UnicodeScalarView()
        var quoted = false
        var wasQuoted = false
        while let scalar = iterator.next() {
            if quoted {
                switch scalar {
                case "\\":
                    guard let escaped = iterator.next() else { return nil }
                    current.append(escaped)
                case "\"": quoted = false
                default: current.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"":
                quoted = true
                wasQuoted = true
            case "\\":
                guard let escaped = iterator.next() else { return nil }
                current.append(escaped)
            case "{", "}":
                return nil  // nested arrays are not supported
            case ",":
                elements.append(element(current, wasQuoted))
                current = .init()
                wasQuoted = false
            default:
                current.append(scalar)
            }
        }
        if quoted { return nil }
        elements.append(element(current, wasQuoted))
        return elements
    }

    private static func element(_ scalars: String.UnicodeScalarView, _ wasQuoted: Bool) -> String? {
        let text = String(scalars)
        if !wasQuoted {
            let trimmed = text.trimmingSpaces()
            return trimmed.uppercased() == "NULL" ? nil : trimmed
        }
        return text
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var view = Substring(self)
        while view.first == " " { view = view.dropFirst() }
        while view.last == " " { view = view.dropLast() }
        return String(view)
    }
}
