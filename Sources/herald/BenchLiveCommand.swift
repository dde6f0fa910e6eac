import ArgumentParser
import Foundation
import HeraldAPI
import HeraldBench
import HeraldCore
import HeraldRuntime
import HeraldStore

/// `herald bench live`: the live channel under load, with `herald serve` in a process of its
/// own and this process as the client (BENCHMARKS.md, docs/cli.md).
struct BenchLiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "The live channel under load: a crowd of sockets against herald serve (a child process), this process the client.",
        discussion: """
            Makes a tenant bench-live-… (removed afterwards unless --keep) with --sockets people in teams of --team, the first \
            --group of them in one group; starts `herald serve` on it as a child process, opens a socket for everyone, and runs \
            the phases: group (messages at --rate a second for --seconds), direct (a one-to-one at --direct-rate a second), storm \
            (every socket drops, 5 messages, everyone reconnects at once with their cursor), presence (everyone offline, then \
            back at once, each subscribing to --followers teammates and in --conversations small conversations); asked for by \
            name, rechecks (a minute idle after presence: what the check of the subscriptions costs). Reports \
            latency, RSS per socket, and the CPU of herald serve and of this client for each phase.
            """)

    @Option(help: "Sockets (one person each).") var sockets = 10_000
    @Option(help: "People in the group.") var group = 1_000
    @Option(help: "Group messages a second.") var rate = 10
    @Option(help: "Seconds of each message phase.") var seconds = 10
    @Option(name: .customLong("direct-rate"), help: "One-to-one messages a second.") var directRate = 200
    @Option(help: "People a team.") var team = 100
    @Option(help: "Teammates each socket subscribes to (presence).") var followers = 50
    @Option(help: "Small conversations each person is in (presence).") var conversations = 5
    @Option(
        help:
            "Phases, comma-separated: group, direct, storm, presence; and rechecks (a minute idle after presence, every subscription held)."
    ) var phases = "group,direct,storm,presence"
    @Flag(
        help:
            "The group and its team start with three people and grow to --group while herald serve runs, before the group phase (one big team grown over time)."
    )
    var grown = false
    @Flag(help: "Leave the bench tenant in the database.") var keep = false
    @Option(
        name: .customLong("serve-binary"),
        help: "The herald binary to run `serve` with (another build, to compare two on one database and one client); this one by default.")
    var serveBinary: String?
    @OptionGroup var options: GlobalOptions

    func validate() throws {
        guard (2...100_000).contains(sockets), (2...sockets).contains(group), (1...1_000).contains(rate), (1...600).contains(seconds),
            (1...5_000).contains(directRate), (2...sockets).contains(team), (0...PresenceFollowing.maxSubscriptions).contains(followers),
            (0...20).contains(conversations)
        else {
            throw ValidationError(
                "--sockets 2-100000, --group 2-sockets, --rate 1-1000, --seconds 1-600, --direct-rate 1-5000, --team 2-sockets, --followers 0-100, --conversations 0-20"
            )
        }
        if let serveBinary, !FileManager.default.isExecutableFile(atPath: serveBinary) {
            throw ValidationError("--serve-binary \(serveBinary) is not an executable file")
        }
        for phase in phases.split(separator: ",") where LiveBench.Phase(rawValue: String(phase)) == nil {
            throw ValidationError("--phases names group, direct, storm, presence or rechecks (not \(phase))")
        }
        let named = Set(phases.split(separator: ",").map(String.init))
        if named.contains("rechecks"), !named.contains("presence") {
            throw ValidationError("--phases rechecks follows presence: name both (the subscriptions are made by presence)")
        }
    }

    func run() async throws {
        var settings = LiveBench.Settings()
        settings.sockets = sockets
        settings.group = group
        settings.rate = rate
        settings.seconds = seconds
        settings.directRate = directRate
        settings.team = team
        settings.followers = followers
        settings.conversations = conversations
        if grown { settings.grownFrom = min(3, group) }
        settings.phases = Set(phases.split(separator: ",").compactMap { LiveBench.Phase(rawValue: String($0)) })
        settings.printing = !options.json
        APIServer.raiseFileLimit()
        let logger = DemoCommand.quiet(HeraldLogging.logger, at: .warning)
        let slug = "bench-live-\(UUID().uuidString.prefix(6).lowercased())"
        try await HeraldEnvironment(logger: logger).withStore(poolSize: 2) { store in
            let tenant = try await store.createTenant(slug: slug, name: "Live bench")
            do {
                let (crowd, key) = try await store.withTenant(tenant) { session in
                    let crowd = try await session.addLiveCrowd(
                        people: sockets, teamSize: team, group: settings.grownFrom ?? group, conversationsEach: conversations,
                        conversationSize: settings.conversationSize)
                    return (crowd, try await session.createTenantKey(name: "bench", lifetime: nil, by: "bench").secret)
                }
                try await store.analyze(.directory)
                try await store.analyze(.participants)
                let serve = try ServeProcess.start(
                    binary: serveBinary,
                    arguments: [
                        "serve", "--host", "127.0.0.1", "--port", "0", "--key-rate", "1000000", "--key-burst", "1000000",
                        "--max-connections-per-address", "1000000", "--live-sockets", String(sockets + 1_000)
                    ])
                defer { serve.stop() }
                let bench = try LiveBench(
                    server: .init(host: "127.0.0.1", port: serve.port, key: key, pid: serve.pid), crowd: crowd, tenant: tenant, store: store,
                    settings: settings, logger: logger)
                let lines = try await bench.run()
                if options.json { try printJSON(["scenario": ["live"], "lines": lines]) }
            } catch {
                if !keep { try? await store.deleteTenant(slug: slug) }
                throw error
            }
            if !keep { try await store.deleteTenant(slug: slug) }
        }
    }
}
