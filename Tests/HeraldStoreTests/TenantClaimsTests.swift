import Foundation
import Testing

/// The list in docs/operating/scaling.md of the statements that claim or lock work under a
/// lease, and whether each names its tenant (what Citus needs to route `SKIP LOCKED`, the path
/// beyond one primary that page describes), is the code's: this test reads the store's
/// statements and fails when the list and the code differ.
struct TenantClaimsTests {
    /// Where a claim stands on naming its tenant.
    enum Scope: String, CaseIterable {
        /// Its statement runs for one tenant (a tenant's session, or `tenant_id = …`).
        case named
        /// Across every tenant, or one with `--only-tenant` (`tenantScope`).
        case onlyTenant = "with --only-tenant"
        /// Across every tenant, always.
        case notNamed = "not named"
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// Every function of the store whose SQL locks rows with `SKIP LOCKED`, takes a lease
    /// (`SET … lease_owner = \(worker)`, a row of `delivery_leases`) or a tenant's turn to claim,
    /// as `Type.function`, with its scope.
    static func claimsInTheCode() throws -> [String: Scope] {
        let sources = root.appendingPathComponent("Sources/HeraldStore")
        let files =
            FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var claims: [String: Scope] = [:]
        for file in files {
            let type = String(file.deletingPathExtension().lastPathComponent.prefix { $0 != "+" })
            var functions: [(name: String, lines: [Substring])] = []
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
                if let name = functionName(line) {
                    functions.append((name, []))
                } else if !functions.isEmpty {
                    functions[functions.count - 1].lines.append(line)
                }
            }
            for function in functions {
                let statements = function.lines.filter {
                    let code = $0.drop { $0 == " " }
                    return !code.hasPrefix("//") && !code.hasPrefix("--")
                }
                let takesWork = statements.contains {
                    $0.contains("SKIP LOCKED") || ($0.contains("SET ") && $0.contains("lease_owner = \\(worker)"))
                        || $0.contains("INSERT INTO delivery_leases") || $0.contains("advisory_xact_lock(\\(Self.claimLockClass)")
                }
                guard takesWork else { continue }
                let body = statements.joined(separator: "\n")
                let scope: Scope =
                    if type == "TenantSession" || body.contains("tenant_id = \\(tenant") {
                        .named
                    } else if body.contains("tenantScope:") || body.contains("current_setting('herald.claiming'") {
                        // (A claim's tenants are those whose turn `claimTurns` took.)
                        .onlyTenant
                    } else {
                        .notNamed
                    }
                claims["\(type).\(function.name)"] = scope
            }
        }
        return claims
    }

    /// `func name(` on a declaration line.
    static func functionName(_ line: Substring) -> String? {
        let code = line.drop { $0 == " " }
        guard !code.hasPrefix("//"), let range = code.range(of: "func ") else { return nil }
        let before = code[..<range.lowerBound].split(separator: " ")
        let modifiers: Set<Substring> = ["public", "private", "fileprivate", "internal", "static", "mutating", "@discardableResult", "nonisolated"]
        guard before.allSatisfy({ modifiers.contains($0) }) else { return nil }
        let name = code[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return name.isEmpty ? nil : String(name)
    }

    /// The table after `<!-- claims -->` in docs/operating/scaling.md: `| \`Type.function\` | … | scope |`.
    static func claimsInTheDocs() throws -> [String: String] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/operating/scaling.md"), encoding: .utf8)
        guard let marker = text.range(of: "<!-- claims -->") else { return [:] }
        var claims: [String: String] = [:]
        for line in text[marker.upperBound...].split(separator: "\n").drop(while: { !$0.hasPrefix("|") }).prefix(while: { $0.hasPrefix("|") }) {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, cells[0].hasPrefix("`"), cells[0].hasSuffix("`") else { continue }
            claims[String(cells[0].dropFirst().dropLast())] = cells[cells.count - 1].replacingOccurrences(of: "`", with: "")
        }
        return claims
    }

    @Test func theDocumentedClaimsAreTheCodes() throws {
        let code = try Self.claimsInTheCode()
        #expect(code.count >= 6, "found only \(code.count) claims: the scan no longer reads the store's SQL")
        #expect(code["DeliveryQueue.claim"] == .onlyTenant, "the deliveries' claim: \(String(describing: code["DeliveryQueue.claim"]))")
        let docs = try Self.claimsInTheDocs()
        let expected = code.mapValues(\.rawValue)
        let shown = expected.sorted { $0.key < $1.key }.map { "| `\($0.key)` | … | \($0.value) |" }.joined(separator: "\n")
        #expect(docs == expected, "docs/operating/scaling.md's claims differ from the code's; the code has:\n\(shown)")
    }
}
