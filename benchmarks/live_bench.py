"""The client side of benchmarks/live: people, teams, tokens and a group over the REST API,
then one socket each, a paced sender, a reconnect storm, and the figures."""

import asyncio
import concurrent.futures
import gc
import json
import os
import sys
import time
import urllib.error
import urllib.request

BASE, KEY, PID = os.environ["LIVE_BASE"], os.environ["LIVE_KEY"], int(os.environ["LIVE_PID"])
SOCKETS, GROUP, RATE, SECONDS, TEAM = (int(x) for x in sys.argv[1:6])
STORM_MESSAGES = 5
DIRECT_RATE = 200  # one-to-one messages a second, for SECONDS
TICK = os.sysconf("SC_CLK_TCK")
DURABLE = {"message", "receipt", "conversation", "activity", "notification"}


def rest(method, path, body=None, token=KEY):
    request = urllib.request.Request(BASE + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    request.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as answer:
        text = answer.read()
        return json.loads(text) if text else None


def rss_kib():
    for line in open(f"/proc/{PID}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds():
    fields = open(f"/proc/{PID}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else float("nan")


class Socket:
    """One person's socket: what it saw, and its cursor to resume from."""

    def __init__(self, email, token):
        self.email, self.token = email, token
        self.cursor = None
        self.ready = asyncio.Event()
        self.messages = []  # ids of the group's messages, in the order they came
        self.failure = None
        self.task = None
        self.connection = None


async def main():
    import websockets

    teams = (SOCKETS + TEAM - 1) // TEAM
    emails = [f"p{n:05d}@bench.test" for n in range(SOCKETS)]
    tokens = {}

    def person(n):
        email = emails[n]
        rest("POST", "/v1/people", {"email": email, "name": email.split("@")[0]})
        rest("PUT", f"/v1/teams/t{n // TEAM:04d}/members/{email}", {"role": "member"})
        if n < GROUP:
            rest("PUT", f"/v1/teams/crew/members/{email}", {"role": "member"})
        tokens[email] = rest("POST", f"/v1/people/{email}/tokens", {"name": "bench"})["secret"]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda t: rest("POST", "/v1/teams", {"slug": f"t{t:04d}", "name": f"Team {t}"}), range(teams)))
        list(pool.map(person, range(SOCKETS)))
    sender = emails[0]
    conversation = rest("POST", "/v1/conversations", {"with": emails[1:GROUP], "name": "bench", "team": "crew"}, token=tokens[sender])["id"]
    sockets = [Socket(email, tokens[email]) for email in emails]
    group = sockets[:GROUP]

    # One-to-one: two people of one small team (outside the group), in a direct conversation.
    pair = next((emails[n], emails[n + 1]) for n in range(GROUP, SOCKETS - 1) if n // TEAM == (n + 1) // TEAM)
    direct = rest("POST", "/v1/conversations", {"with": [pair[1]]}, token=tokens[pair[0]])["id"]

    rss_before = rss_kib()
    latencies = {conversation: [], direct: []}  # ms, post → frame, by conversation
    received = latencies[conversation]
    failures = []

    async def hold(socket, resume):
        try:
            await listen(socket, resume)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a socket that could not open, or closed: counted, and the run fails
            socket.failure = f"{socket.email}: {error!r}"
            failures.append(socket.failure)
            socket.ready.set()

    async def listen(socket, resume):
        url = BASE.replace("http", "ws") + "/v1/live" + (f"?after={socket.cursor}" if resume and socket.cursor else "")
        for attempt in range(20):
            try:
                connection = await websockets.connect(
                    url, additional_headers={"Authorization": f"Bearer {socket.token}"}, open_timeout=120, ping_interval=None,
                    max_queue=None, close_timeout=1)
                break
            except websockets.exceptions.InvalidStatus as refusal:  # 503: the server still counts the old socket
                if refusal.response.status_code != 503 or attempt == 19:
                    raise
                await asyncio.sleep(0.5)
        socket.connection = connection
        async with connection:
            hello = json.loads(await connection.recv())
            if not resume:
                socket.cursor = hello["cursor"]
            socket.ready.set()
            async for text in connection:
                frame = json.loads(text)
                if frame["type"] in DURABLE and "cursor" in frame:
                    socket.cursor = frame["cursor"]
                if frame["type"] == "message" and frame["conversation"] in latencies and not frame["message"]["isSystem"]:
                    if frame["conversation"] == conversation:
                        socket.messages.append(frame["message"]["id"])
                    words = frame["message"]["text"].split()
                    if words[0] == "at":
                        latencies[frame["conversation"]].append((time.time() - float(words[1])) * 1000)

    async def open_all(resume, batch):
        for socket in sockets:
            socket.ready = asyncio.Event()
        for start in range(0, len(sockets), batch):
            for socket in sockets[start:start + batch]:
                socket.task = asyncio.create_task(hold(socket, resume))
            await asyncio.gather(*(s.ready.wait() for s in sockets[start:start + batch]))

    opening = time.time()
    await open_all(False, 200)
    opened = time.time() - opening
    if failures:
        print(f"{len(failures)} sockets failed, e.g. {failures[0]}")
        sys.exit(1)
    # The client's own pauses out of the figures: its cyclic collector, walking every socket's
    # objects, stalled it for hundreds of milliseconds.
    gc.freeze()
    gc.disable()
    await asyncio.sleep(6)  # settled: the server hands back what the ramp freed within 5 s
    rss_open = rss_kib()
    # Idle: every socket open, nothing said (heartbeats only), for 10 s.
    idle_start, idle_clock = cpu_seconds(), time.time()
    await asyncio.sleep(10)
    idle = (cpu_seconds() - idle_start) / (time.time() - idle_clock) * 100
    cpu_start, started = cpu_seconds(), time.time()
    loop = asyncio.get_running_loop()
    posted = 0
    while time.time() - started < SECONDS:
        due = started + posted / RATE
        await asyncio.sleep(max(0, due - time.time()))
        await loop.run_in_executor(None, rest, "POST", f"/v1/conversations/{conversation}/messages",
                                   {"text": f"at {time.time():.6f}"}, tokens[sender])
        posted += 1
    expected = posted * GROUP  # the sender's own socket gets each one too
    deadline = time.time() + 30
    while len(received) < expected and time.time() < deadline:
        await asyncio.sleep(0.1)
    cpu = cpu_seconds() - cpu_start
    elapsed = time.time() - started
    print(f"sockets {SOCKETS} in teams of {TEAM}, group {GROUP}: opened in {opened:.1f} s; "
          f"{posted} messages in {elapsed:.1f} s, {len(received)} of {expected} message frames arrived")
    print(f"latency post → socket (ms): p50 {percentile(received, 50):.1f}  p95 {percentile(received, 95):.1f}  "
          f"p99 {percentile(received, 99):.1f}  max {max(received) if received else float('nan'):.1f}")
    print(f"RSS: {rss_before / 1024:.1f} MiB before the sockets, {rss_open / 1024:.1f} MiB with them: "
          f"{(rss_open - rss_before) / max(1, SOCKETS):.1f} KiB a socket")
    print(f"idle with every socket open: {idle:.2f} % of one core")
    print(f"CPU of herald serve: {cpu:.2f} s for {posted} messages = {cpu / max(1, posted) * 1000:.1f} ms a message, "
          f"{cpu / max(1, len(received)) * 1e6:.0f} µs a delivered frame (receipts and REST posts included)")
    ok = len(received) >= expected

    # One-to-one at DIRECT_RATE a second: each message to both of the pair's sockets.
    direct_received = latencies[direct]
    started = time.time()
    sends = []
    posted_direct = 0
    while time.time() - started < SECONDS:
        due = started + posted_direct / DIRECT_RATE
        await asyncio.sleep(max(0, due - time.time()))
        sends.append(loop.run_in_executor(None, rest, "POST", f"/v1/conversations/{direct}/messages",
                                          {"text": f"at {time.time():.6f}"}, tokens[pair[0]]))
        posted_direct += 1
    await asyncio.gather(*sends)
    deadline = time.time() + 30
    while len(direct_received) < posted_direct * 2 and time.time() < deadline:
        await asyncio.sleep(0.1)
    print(f"one-to-one: {posted_direct} messages at {posted_direct / max(0.001, time.time() - started):.0f}/s, "
          f"{len(direct_received)} of {posted_direct * 2} frames (both phones of the pair); latency (ms): "
          f"p50 {percentile(direct_received, 50):.1f}  p95 {percentile(direct_received, 95):.1f}  "
          f"p99 {percentile(direct_received, 99):.1f}  max {max(direct_received) if direct_received else float('nan'):.1f}")
    ok = ok and len(direct_received) >= posted_direct * 2

    # The storm: every socket drops at once, the group is sent STORM_MESSAGES meanwhile, and every
    # socket reconnects at once with its cursor: each group member must get exactly those, in order.
    await asyncio.sleep(1)
    for socket in sockets:
        socket.task.cancel()
    await asyncio.gather(*(s.task for s in sockets), return_exceptions=True)
    for socket in group:
        socket.messages = []
    missed = []
    for n in range(STORM_MESSAGES):
        missed.append(rest("POST", f"/v1/conversations/{conversation}/messages", {"text": f"storm {n}"}, token=tokens[sender])["id"])
    storm = time.time()
    await open_all(True, len(sockets))
    hellos = time.time() - storm
    deadline = time.time() + 60
    while any(s.messages != missed for s in group) and time.time() < deadline:
        if any(len(s.messages) > len(missed) for s in group):
            break
        await asyncio.sleep(0.05)
    resumed = time.time() - storm
    wrong = [s.email for s in group if s.messages != missed]
    print(f"reconnect storm: {SOCKETS} sockets back with their cursors, every hello in {hellos:.1f} s, "
          f"the {len(missed)} missed messages on all {GROUP} of the group's sockets in {resumed:.1f} s; "
          f"{len(wrong)} sockets with a gap, a repeat or the wrong order{', e.g. ' + wrong[0] if wrong else ''}; "
          f"{len(failures)} sockets failed{', e.g. ' + failures[0] if failures else ''}")
    for socket in sockets:
        socket.task.cancel()
    await asyncio.gather(*(s.task for s in sockets), return_exceptions=True)
    if not ok or wrong or failures:
        sys.exit(1)


asyncio.run(main())
