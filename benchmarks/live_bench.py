"""The client side of benchmarks/live: people, tokens and a group over the REST API, then
one socket each, a paced sender, and the figures."""

import asyncio
import json
import os
import sys
import time
import urllib.request

BASE, KEY, PID = os.environ["LIVE_BASE"], os.environ["LIVE_KEY"], int(os.environ["LIVE_PID"])
SOCKETS, GROUP, RATE, SECONDS = (int(x) for x in sys.argv[1:5])
TICK = os.sysconf("SC_CLK_TCK")


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


async def main():
    import websockets

    emails = [f"p{n:05d}@bench.test" for n in range(SOCKETS)]
    tokens = {}
    for email in emails:
        rest("POST", "/v1/people", {"email": email, "name": email.split("@")[0]})
        rest("PUT", f"/v1/teams/crew/members/{email}", {"role": "member"})
        tokens[email] = rest("POST", f"/v1/people/{email}/tokens", {"name": "bench"})["secret"]
    sender = emails[0]
    conversation = rest("POST", "/v1/conversations", {"with": emails[1:GROUP], "name": "bench", "team": "crew"}, token=tokens[sender])["id"]

    rss_before = rss_kib()
    received = []  # latencies in ms
    frames = 0

    failures = []

    async def hold(email, ready):
        try:
            await listen(email, ready)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a socket that could not open, or closed: counted, and the run fails
            failures.append(f"{email}: {error!r}")
            ready.set()

    async def listen(email, ready):
        nonlocal frames
        async with websockets.connect(
            BASE.replace("http", "ws") + "/v1/live", additional_headers={"Authorization": f"Bearer {tokens[email]}"},
            open_timeout=120, ping_interval=None, max_queue=None) as socket:
            await socket.recv()  # hello
            ready.set()
            async for text in socket:
                frames += 1
                frame = json.loads(text)
                if frame["type"] == "message" and frame["conversation"] == conversation and not frame["message"]["isSystem"]:
                    sent = float(frame["message"]["text"].split()[1])
                    received.append((time.time() - sent) * 1000)

    readies = []
    tasks = []
    for email in emails:
        ready = asyncio.Event()
        readies.append(ready)
        tasks.append(asyncio.create_task(hold(email, ready)))
        if len(tasks) % 200 == 0:
            await asyncio.gather(*(r.wait() for r in readies))
    await asyncio.gather(*(r.wait() for r in readies))
    if failures:
        print(f"{len(failures)} sockets failed, e.g. {failures[0]}")
        sys.exit(1)
    await asyncio.sleep(2)
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
    for task in tasks:
        task.cancel()
    print(f"sockets {SOCKETS}, group {GROUP}: {posted} messages in {elapsed:.1f} s, {len(received)} of {expected} message frames arrived")
    print(f"latency post → socket (ms): p50 {percentile(received, 50):.1f}  p95 {percentile(received, 95):.1f}  "
          f"p99 {percentile(received, 99):.1f}  max {max(received) if received else float('nan'):.1f}")
    print(f"RSS: {rss_before / 1024:.1f} MiB before the sockets, {rss_open / 1024:.1f} MiB with them: "
          f"{(rss_open - rss_before) / max(1, SOCKETS):.1f} KiB a socket")
    print(f"idle with every socket open: {idle:.2f} % of one core")
    print(f"CPU of herald serve: {cpu:.2f} s for {posted} messages = {cpu / max(1, posted) * 1000:.1f} ms a message, "
          f"{cpu / max(1, len(received)) * 1e6:.0f} µs a delivered frame (receipts and REST posts included)")
    if len(received) < expected:
        sys.exit(1)


asyncio.run(main())
