/// A tenant as `herald` commands build it, written once for every CLI test: teams, people
/// (with their teams, roles and clocks) and devices, turned into the commands that make them.
///
///     let acme = CLIFixture.acmeOps.adding(admin: "root@acme.test", name: "Ada Admin")
///     for command in acme.commands { try await ok(cli, command) }
public struct CLIFixture: Sendable {
    public struct Person: Sendable {
        public var email: String
        public var name: String
        public var team: String?
        public var role: String?
        public var admin = false
        public var timeZone: String?
        public var locale: String?
    }

    public struct Device: Sendable {
        public var email: String
        public var token: String
        public var app: String
        public var platform = "android"
    }

    public var slug: String
    public var tenantName: String
    public var teams: [(slug: String, name: String)]
    public var people: [Person] = []
    public var devices: [Device] = []

    public init(slug: String = "acme", name: String = "Acme Corp", teams: [(slug: String, name: String)] = []) {
        self.slug = slug
        self.tenantName = name
        self.teams = teams
    }

    /// Tenant `acme` (Acme Corp) with team `ops` (Field Ops): Alice Moreau its manager, Chidi
    /// Okafor a member.
    public static var acmeOps: CLIFixture {
        CLIFixture(teams: [("ops", "Field Ops")])
            .adding("alice@acme.test", name: "Alice Moreau", team: "ops", role: "manager")
            .adding("chidi@acme.test", name: "Chidi Okafor", team: "ops", role: "member")
    }

    /// Someone, in `team` with `role` when given.
    public func adding(
        _ email: String, name: String, team: String? = nil, role: String? = nil, timeZone: String? = nil, locale: String? = nil
    ) -> CLIFixture {
        var fixture = self
        fixture.people.append(Person(email: email, name: name, team: team, role: role, timeZone: timeZone, locale: locale))
        return fixture
    }

    /// An admin of the tenant, in no team.
    public func adding(admin email: String, name: String) -> CLIFixture {
        var fixture = self
        fixture.people.append(Person(email: email, name: name, admin: true))
        return fixture
    }

    /// Another team.
    public func adding(team slug: String, name: String) -> CLIFixture {
        var fixture = self
        fixture.teams.append((slug, name))
        return fixture
    }

    /// A device of `email`'s.
    public func adding(device token: String, of email: String, app: String, platform: String = "android") -> CLIFixture {
        var fixture = self
        fixture.devices.append(Device(email: email, token: token, app: app, platform: platform))
        return fixture
    }

    /// The `herald` commands that make it, in order: the tenant, its teams, its people,
    /// their memberships, their devices.
    public var commands: [[String]] {
        var commands: [[String]] = [["tenant", "create", slug, "--name", tenantName]]
        commands += teams.map { ["team", "create", $0.slug, "--name", $0.name] }
        for person in people {
            var add = ["user", "add", person.email, "--name", person.name]
            if let timeZone = person.timeZone { add += ["--time-zone", timeZone] }
            if let locale = person.locale { add += ["--locale", locale] }
            if person.admin { add.append("--admin") }
            commands.append(add)
        }
        for person in people {
            guard let team = person.team, let role = person.role else { continue }
            commands.append(["team", "add-member", team, person.email, "--role", role])
        }
        commands += devices.map { ["device", "register", "--user", $0.email, "--token", $0.token, "--app", $0.app, "--platform", $0.platform] }
        return commands
    }
}
