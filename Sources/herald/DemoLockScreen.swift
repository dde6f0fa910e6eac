import Foundation
import HeraldCore

/// A Live Activity push as the iPhone's lock screen shows it (`herald demo`): a box with the
/// activity, who has it, its status, and how long it has waited for approval.
struct DemoLockScreen {
    /// What the start said of the activity (updates carry only the changing state).
    var name = ""
    var team = ""

    /// The lines of the box for one push's `aps`, each line padded to the widest (measured in
    /// Unicode scalars, as terminals and the rest of Herald count text).
    mutating func render(_ aps: [String: Any], receivedAt: Date) -> [String] {
        if let attributes = aps["attributes"] as? [String: Any] {
            name = attributes["name"] as? String ?? name
            team = attributes["team"] as? String ?? team
        }
        let event = aps["event"] as? String ?? "?"
        let state = aps["content-state"] as? [String: Any] ?? [:]
        let status = (state["status"] as? String ?? "?").replacingOccurrences(of: "_", with: " ")
        var lines = [
            "P0 · \(name) · \(team)",
            "\(state["assignee"] as? String ?? "?") · \(status)",
            "deadline \(state["deadline"] as? String ?? "?")"
        ]
        if let since = state["waitingSince"] as? Int {
            let minutes = max(0, Int(receivedAt.timeIntervalSince1970) - since) / 60
            lines.append("waiting for approval \(minutes) min")
        }
        if event == "end", let dismissal = aps["dismissal-date"] as? Int {
            let hours = (dismissal - (aps["timestamp"] as? Int ?? dismissal)) / 3600
            lines.append("done ✓ · leaves the lock screen in \(hours) h")
        }
        let safe = lines.map { TerminalText.escaped($0) }
        let width = safe.map(\.unicodeScalars.count).max() ?? 0
        let border = String(repeating: "─", count: width + 2)
        return ["┌" + border + "┐"] + safe.map { "│ " + $0 + String(repeating: " ", count: width - $0.unicodeScalars.count) + " │" }
            + ["└" + border + "┘"]
    }
}
