// herald-chat: a terminal chat built only on HeraldKit.
//
//   herald-chat --server http://127.0.0.1:8080 --token hrp_… [--state DIR]
//
// Lines typed are commands (/help) or messages to the open conversation. It shows messages as
// they arrive with their status ticks (· pending, ✓ sent, ✓✓ delivered, ✓✓ read), who types,
// who comes online, what reaches the inbox and the badge (/inbox lists it). Messages typed while the server is away wait in the outbox (kept in
// --state across restarts) and go as soon as it is back. At the end of its input, it waits for
// the outbox to empty, then exits.
import Foundation
import HeraldKit

struct Options {
    var server: URL
    var token: String
    var state: URL

    static func parse(_ arguments: [String]) -> Options? {
        var values: [String: String] = [:]
        var index = 0
        while index + 1 < arguments.count {
            values[arguments[index]] = arguments[index + 1]
            index += 2
        }
        guard index == arguments.count, let server = values["--server"].flatMap(URL.init(string:)), let token = values["--token"] else { return nil }
        let state = values["--state"].map { URL(fileURLWithPath: $0, isDirectory: true) }
        return Options(server: server, token: token, state: state ?? FileManager.default.temporaryDirectory.appendingPathComponent("herald-chat"))
    }
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ line: String) -> Never {
    FileHandle.standardError.write(Data("herald-chat: \(line)\n".utf8))
    exit(1)
}

let tick: [MessageStatus: String] = [.pending: "·", .sent: "✓", .delivered: "✓✓", .read: "✓✓ read"]

guard let options = Options.parse(Array(CommandLine.arguments.dropFirst())) else {
    fail("usage: herald-chat --server URL --token TOKEN [--state DIR]")
}

/// Lines of standard input, read on a thread of their own.
func inputLines() -> AsyncStream<String> {
    AsyncStream { continuation in
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
    }
}

let client = HeraldClient(server: options.server, token: options.token)
try? FileManager.default.createDirectory(at: options.state, withIntermediateDirectories: true)
// Who the token is, kept from the last run: the chat opens without the server, as an app does.
let signIn = options.state.appendingPathComponent("me.json")
let me: Me
do {
    me = try await client.me()
    try? JSONEncoder().encode(me).write(to: signIn, options: .atomic)
} catch let error as HeraldError where error.isTransient {
    guard let data = try? Data(contentsOf: signIn), let kept = try? JSONDecoder().decode(Me.self, from: data) else { fail("\(error)") }
    me = kept
    say("-- offline: \(error)")
} catch { fail("\(error)") }
guard let person = me.person?.email else { fail("the token must be a person's (hrp_…)") }
let outbox: Outbox
do {
    outbox = try Outbox(client: client, store: FileOutboxStore(url: options.state.appendingPathComponent("\(person).outbox.json")))
} catch { fail("the outbox in \(options.state.path) cannot be read: \(error)") }
let session = LiveSession(
    client: client, cursorStore: FileCursorStore(url: options.state.appendingPathComponent("\(person).cursor")), outbox: outbox)
say("signed in as \(person) (\(me.tenant.name)); /help for commands")

let chat = ChatScreen(client: client, session: session, outbox: outbox, me: person, state: options.state)
await chat.listConversations()
await session.foreground(true)
await session.start()

let events = Task {
    for await event in session { await chat.show(event) }
}
let outcomes = Task {
    for await outcome in outbox.events { await chat.show(outcome) }
}
for await line in inputLines() {
    await chat.handle(line)
}
// The end of the input: what is still pending goes first.
while await !outbox.pending.isEmpty, await !chat.refused { try? await Task.sleep(for: .milliseconds(100)) }
try? await Task.sleep(for: .milliseconds(300))
await session.stop()
await outbox.close()
_ = await (events.value, outcomes.value)
