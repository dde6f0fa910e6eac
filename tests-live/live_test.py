"""The live channel end to end (scripts/live-test): two herald serve processes on one
database, a real WebSocket client. Every test makes its own conversation, so they run in any
order; each waits for the frames it means, never for a fixed time."""

import asyncio
import base64
import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
import unittest
import re
import urllib.error
import urllib.parse
import urllib.request
import uuid

import websockets
import websockets.exceptions

A = os.environ["LIVE_A"]
B = os.environ["LIVE_B"]
HERALD = os.environ["LIVE_HERALD"]
TOKENS = {name: os.environ[f"LIVE_TOKEN_{name.upper()}"] for name in ["alice", "bob", "carol", "dave", "erin", "ada", "mallory"]}
WAIT = 20  # seconds for a frame that should come at once, on a loaded machine


def rest(method, base, path, token, body=None):
    request = urllib.request.Request(base + path, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, data, timeout=30) as answer:
            text = answer.read()
            return answer.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, (json.loads(text) if text else None)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Keeps a 303 as the answer (its cookies are what the test wants)."""

    def redirect_request(self, *args, **kwargs):
        return None


def uuids(value):
    """Every string in a JSON value that is a UUID, in either case."""
    if isinstance(value, str):
        try:
            uuid.UUID(value)
            return [value] if len(value) == 36 else []
        except ValueError:
            return []
    if isinstance(value, list):
        return [found for item in value for found in uuids(item)]
    if isinstance(value, dict):
        return [found for item in value.values() for found in uuids(item)]
    return []


def ws_url(base, **query):
    url = base.replace("http://", "ws://") + "/v1/live"
    if query:
        url += "?" + "&".join(f"{key}={value}" for key, value in query.items())
    return url


def group(*people, creator="alice"):
    status, conversation = rest(
        "POST", A, "/v1/conversations", TOKENS[creator],
        {"with": [f"{p}@demo.test" for p in people], "name": f"live {uuid.uuid4().hex[:8]}", "team": "field-ops"})
    assert status == 201, (status, conversation)
    return conversation["id"]


def post(conversation, text, sender="alice", base=A):
    status, message = rest("POST", base, f"/v1/conversations/{conversation}/messages", TOKENS[sender], {"text": text})
    assert status == 201, (status, message)
    return message


class RawSocket:
    """A WebSocket spoken by hand over a plain socket, for what a library would not do: write a
    frame in the same packet as the upgrade, leave a ping unanswered, send a body with it."""

    def __init__(self, base, token, timeout=WAIT):
        self.host, port = base.removeprefix("http://").split(":")
        self.token = token
        self.connection = socket.create_connection((self.host, int(port)), timeout=timeout)
        self.rest = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.connection.close()

    def request(self, extra_headers="", body=""):
        return (
            f"GET /v1/live HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {self.token}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n{extra_headers}\r\n{body}").encode()

    @staticmethod
    def frame(opcode, payload):
        """A client's frame: final, masked, a 7-bit length."""
        mask = os.urandom(4)
        return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))

    def read_head(self):
        """The answer's head; what came after it is kept for next_frame."""
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = self.connection.recv(4096)
            if not chunk:
                raise AssertionError(f"closed before the answer's head: {received!r}")
            received += chunk
        head, self.rest = received.split(b"\r\n\r\n", 1)
        return head

    def next_frame(self):
        """The server's next frame (final, unmasked, a 7-bit or 16-bit length): (opcode, payload)."""
        def needed():
            if len(self.rest) < 2:
                return 2
            if self.rest[1] & 0x7F == 126:
                return 4 if len(self.rest) < 4 else 4 + int.from_bytes(self.rest[2:4], "big")
            return 2 + (self.rest[1] & 0x7F)
        while len(self.rest) < needed():
            chunk = self.connection.recv(4096)
            if not chunk:
                raise AssertionError("closed in the middle of a frame, or without a close frame")
            self.rest += chunk
        length, start = ((int.from_bytes(self.rest[2:4], "big"), 4) if self.rest[1] & 0x7F == 126
                         else (self.rest[1] & 0x7F, 2))
        if not self.rest[0] & 0x80:
            raise AssertionError(f"a fragmented frame (first byte {self.rest[0]:#x}): Herald sends each whole")
        opcode, payload = self.rest[0] & 0x0F, self.rest[start:start + length]
        self.rest = self.rest[start + length:]
        return opcode, payload


class Socket:
    """A live socket and the frames it received."""

    def __init__(self, connection):
        self.connection = connection
        self.hello = None

    @classmethod
    async def open(cls, base, person, **query):
        connection = await websockets.connect(
            ws_url(base, **query), additional_headers={"Authorization": f"Bearer {TOKENS[person]}"}, max_size=None)
        socket = cls(connection)
        socket.hello = await socket.next()
        assert socket.hello["type"] == "hello", socket.hello
        return socket

    async def next(self, timeout=WAIT):
        return json.loads(await asyncio.wait_for(self.connection.recv(), timeout))

    async def until(self, predicate, timeout=WAIT):
        """The first frame that satisfies predicate (others are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            frame = await self.next(max(0.1, deadline - time.monotonic()))
            if predicate(frame):
                return frame

    async def send(self, frame):
        await self.connection.send(json.dumps(frame))

    async def close(self):
        await self.connection.close()


def run(coroutine):
    return asyncio.run(coroutine)


async def offline(person, timeout=60):
    """Waits until `person` (of the demo) holds no socket anywhere: an earlier test's may still be closing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, answer = rest("GET", A, f"/v1/people/{person}/presence", TOKENS["alice"])
        if status == 200 and not answer["online"]:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"{person} still online after {timeout} s")


async def presence_entry(socket, person, online, timeout=WAIT):
    """The entry for `person` in the next presence frame that says they are (or are not) online."""
    def entry(frame):
        if frame["type"] != "presence":
            return None
        return next((p for p in frame["people"] if p["person"] == person and p["online"] == online), None)
    return entry(await socket.until(lambda f: entry(f) is not None, timeout=timeout))


def is_message_in(conversation):
    return lambda frame: frame["type"] == "message" and frame["conversation"] == conversation and not frame["message"]["isSystem"]


class LiveChannelTests(unittest.TestCase):
    def test_a_message_posted_through_one_server_reaches_sockets_on_both(self):
        async def scenario():
            conversation = group("bob", "carol")
            bob = await Socket.open(A, "bob")
            carol = await Socket.open(B, "carol")
            alice = await Socket.open(B, "alice")
            message = post(conversation, "to both servers")
            for socket in (bob, carol, alice):  # the sender's other sockets too
                frame = await socket.until(is_message_in(conversation))
                self.assertEqual(frame["message"]["id"], message["id"])
                # Ids in one spelling (RFC 9562's lower case), as the API writes them.
                self.assertTrue(uuids(frame) and all(i == i.lower() for i in uuids(frame)), frame)
                self.assertEqual(frame["message"]["text"], "to both servers")
                self.assertGreater(int(frame["cursor"]), int(socket.hello["cursor"]) - 1)
            for socket in (bob, carol, alice):
                await socket.close()

        run(scenario())

    def test_resume_delivers_exactly_the_missed_frames_in_order(self):
        async def scenario():
            conversation = group("bob", "carol")
            bob = await Socket.open(A, "bob")
            first = post(conversation, "before")
            seen = await bob.until(is_message_in(conversation))
            self.assertEqual(seen["message"]["id"], first["id"])
            cursor = seen["cursor"]
            await bob.close()
            missed = [post(conversation, f"missed {n}")["id"] for n in range(3)]
            bob = await Socket.open(B, "bob", after=cursor)
            self.assertEqual(bob.hello["cursor"], cursor)
            got = [(await bob.until(is_message_in(conversation)))["message"]["id"] for _ in missed]
            self.assertEqual(got, missed)
            after = post(conversation, "live again")
            frame = await bob.until(is_message_in(conversation))
            self.assertEqual(frame["message"]["id"], after["id"], "a missed frame came twice, or the live one was lost")
            await bob.close()

        run(scenario())

    def test_frames_written_while_a_client_reconnects_arrive_exactly_once(self):
        """The cursor's seam, as a property: whatever instant the client reconnects at, every
        message posted meanwhile arrives once, in order."""

        async def scenario():
            conversation = group("bob", "dave")
            posted = []
            stop = threading.Event()

            def writer():
                n = 0
                while not stop.is_set() and n < 60:
                    posted.append(post(conversation, f"seam {n}", sender="dave", base=B)["id"])
                    n += 1

            thread = threading.Thread(target=writer)
            received = []
            socket = await Socket.open(A, "bob")
            cursor = socket.hello["cursor"]
            thread.start()
            for round_ in range(12):
                # Read a few frames (or none), then drop the socket and come back by cursor.
                try:
                    for _ in range(round_ % 4):
                        frame = await socket.until(is_message_in(conversation), timeout=2)
                        received.append(frame["message"]["id"])
                        cursor = frame["cursor"]
                except asyncio.TimeoutError:
                    pass
                await socket.close()
                socket = await Socket.open(A if round_ % 2 else B, "bob", after=cursor)
            thread.join()
            stop.set()
            while len(received) < len(posted):
                frame = await socket.until(is_message_in(conversation))
                received.append(frame["message"]["id"])
            await socket.close()
            self.assertEqual(received, posted)

        run(scenario())

    def test_receipts_are_written_and_told_to_the_others(self):
        async def scenario():
            conversation = group("bob", "carol")
            alice = await Socket.open(A, "alice")
            bob = await Socket.open(B, "bob")
            message = post(conversation, "did you get it?")
            await bob.until(is_message_in(conversation))
            # Written to Bob's socket: received by him.
            receipt = await alice.until(
                lambda f: f["type"] == "receipt" and f["conversation"] == conversation and f["person"] == "bob@demo.test")
            self.assertGreaterEqual(receipt["received"], message["sequence"])
            await bob.send({"type": "read", "conversation": conversation, "sequence": message["sequence"]})
            receipt = await alice.until(
                lambda f: f["type"] == "receipt" and f["person"] == "bob@demo.test" and (f.get("read") or 0) >= message["sequence"])
            self.assertEqual(receipt["conversation"], conversation)
            # Carol says so over REST.
            status, _ = rest("POST", B, f"/v1/conversations/{conversation}/received", TOKENS["carol"])
            self.assertEqual(status, 200)
            await alice.until(lambda f: f["type"] == "receipt" and f["person"] == "carol@demo.test")
            status, answer = rest("GET", A, f"/v1/conversations/{conversation}/messages?receipts=true", TOKENS["alice"])
            self.assertEqual(status, 200)
            stored = [m for m in answer["items"] if m["id"] == message["id"]][0]
            self.assertEqual(stored["readBy"], ["bob@demo.test"])
            self.assertEqual(stored["receivedBy"], ["bob@demo.test", "carol@demo.test"])
            self.assertEqual(stored["status"], "delivered")
            await bob.send({"type": "read", "conversation": conversation, "sequence": message["sequence"]})
            await alice.close()
            await bob.close()

        run(scenario())

    def test_presence_typing_and_the_presence_endpoint(self):
        async def scenario():
            conversation = group("erin", "carol")
            await offline("erin@demo.test")
            alice = await Socket.open(A, "alice")
            erin = await Socket.open(B, "erin")
            frame = await presence_entry(alice, "erin@demo.test", True)
            self.assertIsNone(frame["lastSeen"])
            status, presence = rest("GET", A, "/v1/people/erin@demo.test/presence", TOKENS["alice"])
            self.assertEqual((status, presence["online"]), (200, True))
            await erin.send({"type": "typing", "conversation": conversation})
            typing = await alice.until(lambda f: f["type"] == "typing")
            self.assertEqual((typing["conversation"], typing["person"]), (conversation, "erin@demo.test"))
            await erin.close()
            frame = await presence_entry(alice, "erin@demo.test", False)
            self.assertIsNotNone(frame["lastSeen"])
            status, presence = rest("GET", B, "/v1/people/erin@demo.test/presence", TOKENS["alice"])
            self.assertEqual((status, presence["online"]), (200, False))
            self.assertIn("lastSeen", presence)
            status, _ = rest("GET", A, "/v1/people/nobody@demo.test/presence", TOKENS["alice"])
            self.assertEqual(status, 404)
            await alice.close()

        run(scenario())

    def test_presence_subscriptions_and_the_batch_endpoint(self):
        async def scenario():
            await offline("dave@demo.test")
            alice = await Socket.open(A, "alice")
            await alice.send({"type": "presence.subscribe", "people": ["dave@demo.test", "nobody@demo.test", "mallory@rival.test"]})
            error = await alice.until(lambda f: f["type"] == "error")
            self.assertEqual(error["code"], "not_found")
            self.assertIn("nobody@demo.test", error["detail"])
            self.assertIn("mallory@rival.test", error["detail"])
            answer = await alice.until(lambda f: f["type"] == "presence")
            self.assertEqual([(p["person"], p["online"]) for p in answer["people"]], [("dave@demo.test", False)])
            self.assertIn("lastSeen", answer["people"][0])
            dave = await Socket.open(B, "dave")
            await presence_entry(alice, "dave@demo.test", True)
            # Too many: refused, and the last list stays.
            await alice.send({"type": "presence.subscribe", "people": [f"p{n}@demo.test" for n in range(101)]})
            error = await alice.until(lambda f: f["type"] == "error")
            self.assertEqual(error["code"], "too_many")
            await dave.close()
            await presence_entry(alice, "dave@demo.test", False)
            status, answer = rest("GET", A, "/v1/presence?people=dave@demo.test,nobody@demo.test,erin@demo.test", TOKENS["alice"])
            self.assertEqual(status, 200, answer)
            self.assertEqual([p["person"] for p in answer["people"]], ["dave@demo.test", "erin@demo.test"])
            self.assertEqual(answer["unknown"], ["nobody@demo.test"])
            status, answer = rest("GET", A, "/v1/presence?people=" + ",".join(f"p{n}@demo.test" for n in range(101)), TOKENS["alice"])
            self.assertEqual(status, 422, answer)
            # Few names but too long a parameter: refused by its length, naming the field.
            status, answer = rest("GET", A, "/v1/presence?people=" + "x" * 6001 + "@demo.test", TOKENS["alice"])
            self.assertEqual(status, 422, answer)
            self.assertEqual(answer["errors"][0]["field"], "people", answer)
            await alice.close()

        run(scenario())

    def test_activity_transitions_reach_whoever_may_see_them(self):
        async def scenario():
            alice = await Socket.open(A, "alice")  # the team's manager
            bob = await Socket.open(B, "bob")  # the assignee
            carol = await Socket.open(B, "carol")  # neither
            status, activity = rest(
                "POST", A, "/v1/activities", TOKENS["alice"],
                {"team": "field-ops", "assignee": "bob@demo.test", "name": f"live {uuid.uuid4().hex[:6]}", "deadline": "2031-01-31"})
            self.assertEqual(status, 201, activity)
            for socket in (alice, bob):
                frame = await socket.until(lambda f: f["type"] == "activity" and f["activity"]["id"] == activity["id"])
                self.assertEqual(frame["event"], "activity.assigned")
                self.assertTrue(all(i == i.lower() for i in uuids(frame) + uuids(activity)), (frame, activity))
            marker = group("carol", "dave")
            post(marker, "marker")
            # Carol's socket gets the later frame, and none about an activity she may not see.
            while True:
                frame = await carol.next()
                self.assertFalse(frame["type"] == "activity" and frame["activity"]["id"] == activity["id"])
                if is_message_in(marker)(frame):
                    break
            for socket in (alice, bob, carol):
                await socket.close()

        run(scenario())

    def test_a_read_on_one_device_clears_the_item_on_the_others(self):
        """The demo told Bob of his activities: his inbox holds them. Marking one read (or
        unread) from one device reaches his sockets on both servers as `inbox.status`, with the
        badge after it; nobody else's socket hears of it."""
        async def scenario():
            status, page = rest("GET", A, "/v1/me/inbox?limit=1", TOKENS["bob"])
            self.assertEqual(status, 200, page)
            self.assertTrue(page["items"], "the demo left Bob no inbox item")
            item = page["items"][0]["id"]
            status, _ = rest("POST", A, "/v1/me/inbox/read", TOKENS["bob"], {"ids": [item]})  # whatever it was: read
            self.assertEqual(status, 200)
            phone = await Socket.open(A, "bob")
            laptop = await Socket.open(B, "bob")
            carol = await Socket.open(B, "carol")
            for change, expected in (("unread", "unread"), ("read", "read")):
                status, answer = rest("POST", B, f"/v1/me/inbox/{change}", TOKENS["bob"], {"ids": [item]})
                self.assertEqual(status, 200, answer)
                self.assertEqual(answer["status"], expected, answer)
                for socket in (phone, laptop):
                    frame = await socket.until(lambda f: f["type"] == "inbox.status" and f["status"] == expected)
                    self.assertEqual(frame["ids"], [item], frame)
                    badge = await socket.until(lambda f: f["type"] == "badge")
                    self.assertEqual(badge["count"], answer["badge"], (badge, answer))
            status, counts = rest("GET", A, "/v1/me/inbox/counts", TOKENS["bob"])
            self.assertEqual(counts["badge"], answer["badge"], counts)
            # Another person's item is none of Carol's business, and her socket hears nothing of it.
            status, problem = rest("POST", A, "/v1/me/inbox/read", TOKENS["carol"], {"ids": [item]})
            self.assertEqual(status, 422, problem)
            self.assertEqual([error["field"] for error in problem["errors"]], ["ids[0]"], problem)
            marker = group("carol", "dave")
            post(marker, "marker")
            while True:
                frame = await carol.next()
                self.assertNotIn(frame["type"], ("inbox", "inbox.status"), frame)
                if is_message_in(marker)(frame):
                    break
            for socket in (phone, laptop, carol):
                await socket.close()

        run(scenario())

    def test_a_frame_sent_with_the_upgrade_request_is_answered(self):
        """A client may write its first frame right behind the upgrade request, before the 101
        (one write, one segment): the server keeps it for the socket, and its own hello, which
        it writes right behind the 101, comes first."""
        with RawSocket(A, TOKENS["bob"]) as raw:
            raw.connection.sendall(raw.request() + RawSocket.frame(0x1, json.dumps({"type": "ping"}).encode()))
            head = raw.read_head()
            self.assertTrue(head.startswith(b"HTTP/1.1 101"), head)
            types = []
            while len(types) < 2:
                opcode, payload = raw.next_frame()
                self.assertEqual(opcode, 0x1)
                types.append(json.loads(payload)["type"])
            self.assertEqual(types, ["hello", "pong"])

    def test_an_upgrade_request_with_a_body_is_an_ordinary_request(self):
        """Only a GET without a body may upgrade: this one is answered as any request is (NIO
        failed such an upgrade after its 101, and the connection stayed open for ever)."""
        with RawSocket(A, TOKENS["bob"]) as raw:
            raw.connection.sendall(raw.request(extra_headers="Content-Length: 5\r\n", body="hello"))
            head = raw.read_head()
            self.assertTrue(head.startswith(b"HTTP/1.1 426"), head)

    def test_a_socket_that_stops_answering_the_heartbeat_is_closed(self):
        """Server B pings every 5 s (--live-heartbeat 5). A socket that answers a ping stays open
        through the next heartbeat; one that leaves a ping unanswered is closed with 4408 at the
        heartbeat after it. A raw socket: a WebSocket library would answer every ping itself."""
        with RawSocket(B, TOKENS["dave"], timeout=3 * 5 + WAIT) as raw:
            raw.connection.sendall(raw.request())
            head = raw.read_head()
            self.assertTrue(head.startswith(b"HTTP/1.1 101"), head)
            pings = 0
            while True:
                opcode, payload = raw.next_frame()
                if opcode == 0x9:
                    pings += 1
                    if pings == 1:  # the first is answered, with its data
                        raw.connection.sendall(RawSocket.frame(0xA, payload))
                elif opcode == 0x8:
                    break
            self.assertEqual(int.from_bytes(payload[:2], "big"), 4408, payload)
            # Closed at the heartbeat after the unanswered ping, not at the one after the answer.
            self.assertEqual(pings, 2)

    def test_every_refusal(self):
        async def scenario():
            # No credentials, a wrong one, a bad cursor: the problem document of any request.
            for headers, query, status in [
                ({}, {}, 401), ({"Authorization": "Bearer hrl_nonsense"}, {}, 401),
                ({"Authorization": f"Bearer {TOKENS['bob']}"}, {"after": "yesterday"}, 422),
                ({"Authorization": f"Bearer {TOKENS['bob']}"}, {"device": "not-a-device"}, 422),
            ]:
                with self.assertRaises(websockets.exceptions.InvalidStatus) as refused:
                    await websockets.connect(ws_url(A, **query), additional_headers=headers)
                self.assertEqual(refused.exception.response.status_code, status)
            # Not a WebSocket at all.
            code, problem = rest("GET", A, "/v1/live", TOKENS["bob"])
            self.assertEqual(code, 426, problem)
            # A ticket works once.
            code, ticket = rest("POST", A, "/v1/live/tickets", TOKENS["bob"])
            self.assertEqual(code, 201)
            connection = await websockets.connect(ws_url(B, ticket=ticket["ticket"]))
            self.assertEqual(json.loads(await connection.recv())["person"], "bob@demo.test")
            await connection.close()
            with self.assertRaises(websockets.exceptions.InvalidStatus) as refused:
                await websockets.connect(ws_url(A, ticket=ticket["ticket"]))
            self.assertEqual(refused.exception.response.status_code, 401)
            # Frames: not JSON, an unknown type, a conversation one is not in, one one left.
            conversation = group("bob", "carol")
            left = group("dave", "erin")
            code, _ = rest("POST", A, f"/v1/conversations/{left}/leave", TOKENS["dave"])
            self.assertEqual(code, 200)
            dave = await Socket.open(A, "dave")
            for frame, expected in [
                ("not json", "invalid_frame"), (json.dumps({"type": "dance"}), "unknown_type"),
                (json.dumps({"type": "viewing", "conversation": conversation}), "not_found"),
                (json.dumps({"type": "read", "conversation": left, "sequence": 1}), "not_found"),
            ]:
                await dave.connection.send(frame)
                error = await dave.until(lambda f: f["type"] == "error")
                self.assertEqual(error["code"], expected, frame)
            await dave.send({"type": "ping"})
            await dave.until(lambda f: f["type"] == "pong")  # still open
            # Messages in the conversation Dave left never reach him (its system message saying
            # he left may: it was stored when he left).
            post(left, "after dave left", sender="erin")
            marker = group("dave", "carol")
            post(marker, "marker")
            frame = await dave.until(lambda f: f["type"] == "message" and not f["message"]["isSystem"])
            self.assertEqual(frame["conversation"], marker)
            # Over 4 KiB: 1009.
            await dave.connection.send(json.dumps({"type": "ping", "pad": "x" * 5000}))
            with self.assertRaises(websockets.exceptions.ConnectionClosed) as closed:
                while True:
                    await dave.next()
            self.assertEqual(closed.exception.rcvd.code, 1009)
            # A flood: an error frame, then 1008.
            flood = await Socket.open(B, "carol")
            for _ in range(150):
                await flood.send({"type": "ping"})
            codes = []
            with self.assertRaises(websockets.exceptions.ConnectionClosed) as closed:
                while True:
                    codes.append((await flood.next()).get("code"))
            self.assertIn("flood", codes)
            self.assertEqual(closed.exception.rcvd.code, 1008)

        run(scenario())

    def test_a_cursor_this_feed_never_gave_gets_resync(self):
        async def scenario():
            socket = await Socket.open(A, "carol", after="999999999999")
            frame = await socket.next()
            self.assertEqual(frame["type"], "resync")
            # The stream goes on from hello's cursor: the next message arrives.
            conversation = group("carol", "dave")
            message = post(conversation, "after the resync")
            self.assertEqual((await socket.until(is_message_in(conversation)))["message"]["id"], message["id"])
            await socket.close()

        run(scenario())

    def test_the_channel_over_tls(self):
        async def scenario():
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # the script's own self-signed certificate
            url = os.environ["LIVE_TLS"].replace("https://", "wss://") + "/v1/live"
            connection = await websockets.connect(url, additional_headers={"Authorization": f"Bearer {TOKENS['bob']}"}, ssl=context)
            socket = Socket(connection)
            socket.hello = await socket.next()
            self.assertEqual(socket.hello["type"], "hello")
            conversation = group("bob", "carol")
            message = post(conversation, "over TLS")
            frame = await socket.until(is_message_in(conversation))
            self.assertEqual(frame["message"]["id"], message["id"])
            await socket.close()

        run(scenario())

    def test_another_tenant_sees_nothing(self):
        async def scenario():
            mallory = await Socket.open(B, "mallory")  # tenant rival
            ada = await Socket.open(A, "ada")  # the demo tenant's admin: sees every activity there
            conversation = group("bob", "carol")
            post(conversation, "demo tenant only")
            status, activity = rest(
                "POST", A, "/v1/activities", TOKENS["alice"],
                {"team": "field-ops", "assignee": "bob@demo.test", "name": "demo only", "deadline": "2031-01-31"})
            self.assertEqual(status, 201)
            await ada.until(lambda f: f["type"] == "activity" and f["activity"]["id"] == activity["id"])
            # Mallory's socket got none of it; a frame naming the demo's conversation is refused
            # as if it did not exist, and the error is the first frame she gets.
            await mallory.send({"type": "viewing", "conversation": conversation})
            frame = await mallory.next()
            self.assertEqual((frame["type"], frame["code"]), ("error", "not_found"))
            status, _ = rest("GET", B, "/v1/people/bob@demo.test/presence", TOKENS["mallory"])
            self.assertEqual(status, 404)
            await mallory.close()
            await ada.close()

        run(scenario())

    def test_a_revoked_token_closes_its_sockets(self):
        async def scenario():
            name = f"revoke-{uuid.uuid4().hex[:6]}"
            token = subprocess.run(
                [HERALD, "token", "create", "--user", "erin@demo.test", "--name", name], check=True, capture_output=True,
                text=True).stdout.strip().splitlines()[-1]
            connection = await websockets.connect(ws_url(A), additional_headers={"Authorization": f"Bearer {token}"})
            self.assertEqual(json.loads(await connection.recv())["type"], "hello")
            listed = json.loads(subprocess.run(
                [HERALD, "token", "list", "--user", "erin@demo.test", "--json"], check=True, capture_output=True, text=True).stdout)
            items = listed["items"] if isinstance(listed, dict) else listed
            token_id = [item["id"] for item in items if item["name"] == name][0]
            subprocess.run([HERALD, "token", "revoke", token_id], check=True, capture_output=True)
            with self.assertRaises(websockets.exceptions.ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(connection.recv(), WAIT)
            self.assertEqual(closed.exception.rcvd.code, 4401)

        run(scenario())

    def test_rfc6455_violations_close_with_their_codes(self):
        """What RFC 6455 says fails the connection closes it with its code (they were answered
        with pongs, or ignored): an unmasked frame, a reserved opcode or bit (1002), a text
        message that is not UTF-8 (1007)."""
        ping = b'{"type":"ping"}'
        masked = RawSocket.frame(0x1, ping)
        cases = [
            ("unmasked", bytes([0x81, len(ping)]) + ping, 1002),
            ("opcode 3", RawSocket.frame(0x3, b"x"), 1002),
            ("RSV1", bytes([masked[0] | 0x40]) + masked[1:], 1002),
            ("invalid UTF-8", RawSocket.frame(0x1, b'{"type":"ping","x":"\xff\xfe"}'), 1007),
        ]
        for name, frame, code in cases:
            with self.subTest(name), RawSocket(A, TOKENS["bob"]) as raw:
                raw.connection.sendall(raw.request())
                self.assertTrue(raw.read_head().startswith(b"HTTP/1.1 101"))
                self.assertEqual(json.loads(raw.next_frame()[1])["type"], "hello")
                raw.connection.sendall(frame)
                while True:
                    opcode, payload = raw.next_frame()
                    if opcode == 0x8:
                        break
                self.assertEqual(int.from_bytes(payload[:2], "big"), code, payload)

    def test_a_field_of_the_wrong_type_is_named(self):
        async def scenario():
            conversation = group("bob", "carol")
            bob = await Socket.open(A, "bob")
            for frame, field in [
                ({"type": "read", "conversation": conversation, "sequence": 1.5}, "sequence"),
                ({"type": "typing", "conversation": 5}, "conversation"),
                ({"type": "foreground", "value": "yes"}, "value"),
            ]:
                await bob.send(frame)
                error = await bob.until(lambda f: f["type"] == "error")
                self.assertEqual(error["code"], "invalid_frame")
                self.assertTrue(error["detail"].startswith(field), (frame, error))
            # Typing in a conversation he is not in is refused by name, as any frame's failure.
            await bob.send({"type": "typing", "conversation": group("erin", "carol")})
            error = await bob.until(lambda f: f["type"] == "error")
            self.assertEqual(error["code"], "not_found", error)
            await bob.close()

        run(scenario())

    def test_typing_is_told_once_every_few_seconds(self):
        """Ten sockets of Bob's sending 99 typing frames each: Carol is told a few times, not
        990 (each was relayed in a transaction of its own)."""
        async def scenario():
            conversation = group("bob", "carol")
            carol = await Socket.open(B, "carol")
            sockets = [await Socket.open(A, "bob") for _ in range(10)]
            started = time.monotonic()
            for socket in sockets:
                for _ in range(99):
                    await socket.send({"type": "typing", "conversation": conversation})
            # Every socket has had its frames handled once it answers a ping after them.
            for socket in sockets:
                await socket.send({"type": "ping"})
                await socket.until(lambda f: f["type"] == "pong")
            elapsed = time.monotonic() - started
            post(conversation, "marker", sender="bob")
            typing = 0
            while True:
                frame = await carol.next()
                if frame["type"] == "typing" and frame["conversation"] == conversation:
                    typing += 1
                if is_message_in(conversation)(frame):
                    break
            self.assertGreaterEqual(typing, 1)
            self.assertLessEqual(typing, 1 + int(elapsed // 3) + 1, f"{typing} typing frames in {elapsed:.1f} s")
            for socket in sockets + [carol]:
                await socket.close()

        run(scenario())

    def test_a_replay_after_leaving_shows_the_conversation_as_it_was(self):
        """Dave leaves; the group is renamed; Dave's replay from before he left shows its name
        as it was then (it showed the later name)."""
        async def scenario():
            name = f"before {uuid.uuid4().hex[:6]}"
            status, conversation = rest(
                "POST", A, "/v1/conversations", TOKENS["alice"],
                {"with": ["dave@demo.test", "erin@demo.test"], "name": name, "team": "field-ops"})
            self.assertEqual(status, 201, conversation)
            dave = await Socket.open(A, "dave")
            cursor = dave.hello["cursor"]
            await dave.close()
            self.assertEqual(rest("POST", A, f"/v1/conversations/{conversation['id']}/leave", TOKENS["dave"])[0], 200)
            self.assertEqual(rest("PATCH", A, f"/v1/conversations/{conversation['id']}", TOKENS["alice"], {"name": "renamed later"})[0], 200)
            code, seen = rest("GET", A, f"/v1/conversations/{conversation['id']}", TOKENS["dave"])
            self.assertEqual(code, 200)
            self.assertEqual(seen["name"], name)
            self.assertNotIn("dave@demo.test", [p["person"]["email"] for p in seen["participants"]])
            self.assertTrue(all(not p["online"] and p.get("lastSeen") is None for p in seen["participants"]), seen)
            dave = await Socket.open(B, "dave", after=cursor)
            frame = await dave.until(lambda f: f["type"] == "conversation" and f["conversation"]["id"] == conversation["id"])
            self.assertEqual(frame["conversation"]["name"], name)
            await dave.close()

        run(scenario())

    def test_signing_out_of_the_console_closes_its_socket(self):
        """/console/live kept delivering 46 s after sign-out; signing out now closes it (4401)."""
        async def scenario():
            host = A.removeprefix("http://")
            def form(path, fields, cookies):
                body = urllib.parse.urlencode(fields).encode()
                request = urllib.request.Request(A + path, data=body, method="POST")
                request.add_header("Content-Type", "application/x-www-form-urlencoded")
                request.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in cookies.items()))
                opener = urllib.request.build_opener(NoRedirect)
                try:
                    with opener.open(request, timeout=30) as answer:
                        return answer.status, answer.headers, answer.read().decode()
                except urllib.error.HTTPError as error:
                    return error.code, error.headers, error.read().decode()
            cookies = {}
            with urllib.request.urlopen(A + "/console/sign-in", timeout=30) as answer:
                page = answer.read().decode()
                for header in answer.headers.get_all("Set-Cookie"):
                    name, value = header.split(";")[0].split("=", 1)
                    cookies[name] = value
            csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
            status, headers, _ = form("/console/sign-in", {"token": TOKENS["ada"], "csrf": csrf}, cookies)
            self.assertEqual(status, 303)
            for header in headers.get_all("Set-Cookie"):
                name, value = header.split(";")[0].split("=", 1)
                cookies[name] = value
            cookie = "; ".join(f"{k}={v}" for k, v in cookies.items() if v)
            socket = await websockets.connect(
                A.replace("http://", "ws://") + "/console/live", additional_headers={"Cookie": cookie, "Origin": A})
            self.assertEqual(json.loads(await socket.recv())["type"], "hello")
            request = urllib.request.Request(A + "/console/history")
            request.add_header("Cookie", cookie)
            with urllib.request.urlopen(request, timeout=30) as answer:
                session_csrf = re.search(r'name="csrf" value="([^"]+)"', answer.read().decode()).group(1)
            status, _, _ = form("/console/sign-out", {"csrf": session_csrf}, {k: v for k, v in cookies.items() if v})
            self.assertEqual(status, 303)
            with self.assertRaises(websockets.exceptions.ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(socket.recv(), WAIT)
            self.assertEqual(closed.exception.rcvd.code, 4401)
            self.assertIn("signed out", closed.exception.rcvd.reason)

        run(scenario())


class ServerDeathTests(unittest.TestCase):
    """Last: it kills server B."""

    def test_zz_a_killed_server_loses_nothing_and_its_people_go_offline(self):
        async def scenario():
            conversation = group("carol", "dave")
            alice = await Socket.open(A, "alice")
            carol = await Socket.open(B, "carol")
            await presence_entry(alice, "carol@demo.test", True)
            first = post(conversation, "before the crash")
            cursor = (await carol.until(is_message_in(conversation)))["cursor"]
            os.kill(int(os.environ["LIVE_B_PID"]), signal.SIGKILL)
            missed = post(conversation, "while carol's server is dead")
            frame = await presence_entry(alice, "carol@demo.test", False, timeout=60)
            self.assertIsNotNone(frame["lastSeen"])
            carol = await Socket.open(A, "carol", after=cursor)
            got = await carol.until(is_message_in(conversation))
            self.assertEqual(got["message"]["id"], missed["id"])
            self.assertNotEqual(got["message"]["id"], first["id"])
            await carol.close()
            await alice.close()

        run(scenario())

    def test_zzz_sigterm_closes_sockets_with_1001(self):
        """Last of all: it stops server A."""

        async def scenario():
            bob = await Socket.open(A, "bob")
            os.kill(int(os.environ["LIVE_A_PID"]), signal.SIGTERM)
            with self.assertRaises(websockets.exceptions.ConnectionClosed) as closed:
                while True:
                    await bob.next()
            self.assertEqual(closed.exception.rcvd.code, 1001)

        run(scenario())


if __name__ == "__main__":
    unittest.main()
