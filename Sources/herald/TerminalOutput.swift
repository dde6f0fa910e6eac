import HeraldCore

/// Every line the CLI prints for people goes through here: inside this module `print` is this
/// function, so text from people and providers reaches the terminal with its control
/// characters escaped (`TerminalText`), whichever command prints it. Newlines and tabs stay.
/// JSON output (`printJSON`) is escaped by its encoder; the demo's own styling is written with
/// `printStyled`.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator)
    Swift.print(TerminalText.escaped(text), terminator: terminator)
}

/// Prints a line that carries the CLI's own escape sequences (bold, dim). Whatever text from
/// people or providers it holds must already have gone through `TerminalText.escaped`.
func printStyled(_ line: String) {
    Swift.print(line)
}
