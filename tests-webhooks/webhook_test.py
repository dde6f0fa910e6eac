"""Webhooks end to end (docs/webhooks.md), against the real `herald serve --worker` and real local
receivers; signatures are checked with the Standard Webhooks library, not Herald's signer.
Run by scripts/webhook-test, which sets the environment this reads."""

import json
import os
import signal
import subprocess
import threading
import time
import unittest
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

HERALD = os.environ["WEBHOOK_HERALD"]
WORK = os.environ["WEBHOOK_WORK"]
KEY = os.environ["WEBHOOK_KEY"]
RIVAL_KEY = os.environ["WEBHOOK_RIVAL_KEY"]
ALICE = os.environ["WEBHOOK_TOKEN_ALICE"]
BOB = os.environ["WEBHOOK_TOKEN_BOB"]
# How long to wait for an event that must come: long, for loaded machines (a retry comes
# after 5 s, a SIGKILLed worker's leases run out after 5 s).
WAIT = 150


class Server:
    """`herald serve --port 0 --worker`, started and stopped by the tests."""

    def __init__(self):
        self.process = None
        self.url = None
        self.count = 0

    def start(self):
        self.count += 1
        out = open(f"{WORK}/serve-{self.count}.out", "w+")
        err = open(f"{WORK}/serve-{self.count}.err", "w")
        self.process = subprocess.Popen([HERALD, "serve", "--port", "0", "--worker"], stdout=out, stderr=err)
        err.close()
        with open(f"{WORK}/serve.pid", "w") as pid:
            pid.write(str(self.process.pid))
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            out.seek(0)
            line = out.readline().strip()
            if line.startswith("http"):
                self.url = line
                out.close()
                return
            if self.process.poll() is not None:
                raise RuntimeError("herald serve exited")
            time.sleep(0.1)
        raise RuntimeError("herald serve did not start")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def cpu_seconds(self):
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SERVER = Server()


def rest(method, path, token, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(SERVER.url + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
            return response.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, json.loads(text) if text else None


class Receiver:
    """A local HTTP server that records every request; what it answers depends on the path:
    /ok/…, /fail-once/… (500 to the first request of each webhook-id), /gone/… (410),
    /hang/… (no answer until released), /redirect/… (302 to the metadata address)."""

    def __init__(self):
        self.requests = []
        self.lock = threading.Condition()
        self.release = threading.Event()
        self.hanging = 0
        self.most_hanging = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                path = self.path
                with receiver.lock:
                    seen = [r for r in receiver.requests if r["path"] == path and r["headers"].get("webhook-id") == self.headers.get("webhook-id")]
                    receiver.requests.append({"path": path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body, "at": time.monotonic()})
                    receiver.lock.notify_all()
                status, extra = 200, {}
                if path.startswith("/fail-once/") and not seen:
                    status = 500
                elif path.startswith("/gone/"):
                    status = 410
                elif path.startswith("/redirect/"):
                    status, extra = 302, {"Location": "http://169.254.169.254/latest/meta-data/"}
                elif path.startswith("/hang/"):
                    with receiver.lock:
                        receiver.hanging += 1
                        receiver.most_hanging = max(receiver.most_hanging, receiver.hanging)
                    receiver.release.wait(60)
                    with receiver.lock:
                        receiver.hanging -= 1
                try:
                    self.send_response(status)
                    for name, value in extra.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def at(self, path):
        with self.lock:
            return [r for r in self.requests if r["path"] == path]

    def until(self, path, predicate, timeout=WAIT):
        """The requests to `path` once `predicate` holds for them."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                requests = [r for r in self.requests if r["path"] == path]
                if predicate(requests):
                    return requests
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting at {path}: {len(requests)} requests")
                self.lock.wait(left)


RECEIVER = Receiver()


def endpoint(kind, events="activity.*", key=None, url=None):
    path = f"/{kind}/{uuid.uuid4().hex}"
    status, created = rest("POST", "/v1/webhooks", key or KEY, {"url": url or RECEIVER.base + path, "events": events.split(",")})
    assert status == 201, (status, created)
    return path, created


def activity(name=None):
    status, created = rest(
        "POST", "/v1/activities", ALICE,
        {"team": "field-ops", "assignee": "bob@demo.test", "name": name or f"webhook {uuid.uuid4().hex[:8]}", "deadline": "2031-01-31"})
    assert status == 201, (status, created)
    return created["id"]


def events(requests):
    return [json.loads(r["body"]) for r in requests]


def about(activity_id, type="activity.assigned"):
    return lambda requests: any(e["type"] == type and e["data"]["activity"]["id"] == activity_id for e in events(requests))


class WebhookTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        SERVER.start()

    @classmethod
    def tearDownClass(cls):
        RECEIVER.release.set()
        SERVER.process.terminate()
        SERVER.process.wait(60)

    def test_events_are_signed_so_that_the_standard_library_verifies_them(self):
        path, created = endpoint("ok", "activity.*,message.created")
        self.assertTrue(created["secret"].startswith("whsec_"))
        self.assertEqual(created["state"], "active")
        status, listed = rest("GET", f"/v1/webhooks/{created['id']}", KEY)
        self.assertEqual(status, 200)
        self.assertNotIn("secret", listed)
        id = activity()
        self.assertEqual(rest("POST", f"/v1/activities/{id}/start", BOB, {})[0], 200)
        requests = RECEIVER.until(path, lambda r: about(id)(r) and about(id, "activity.started")(r))
        verifier = Webhook(created["secret"])
        for request in requests:
            payload = verifier.verify(request["body"], request["headers"])
            self.assertTrue(request["headers"]["webhook-id"].startswith("msg_"))
            self.assertEqual(set(payload), {"type", "timestamp", "data"})
        assigned = next(e for e in events(requests) if e["type"] == "activity.assigned" and e["data"]["activity"]["id"] == id)
        self.assertEqual(assigned["data"]["activity"]["assignee"]["email"], "bob@demo.test")
        # A forged body does not verify.
        with self.assertRaises(Exception):
            verifier.verify(requests[0]["body"] + b" ", requests[0]["headers"])

    def test_a_500_is_retried_with_the_same_webhook_id(self):
        path, created = endpoint("fail-once")
        id = activity()
        requests = RECEIVER.until(path, lambda r: sum(about(id)([x]) for x in r) >= 2)
        tries = [r for r in requests if about(id)([r])]
        self.assertEqual(tries[0]["headers"]["webhook-id"], tries[1]["headers"]["webhook-id"])
        Webhook(created["secret"]).verify(tries[1]["body"], tries[1]["headers"])
        self.assertGreaterEqual(tries[1]["at"] - tries[0]["at"], 4.5)  # the schedule's first wait is 5 s
        deadline = time.monotonic() + WAIT
        while True:
            status, attempts = rest("GET", f"/v1/webhooks/{created['id']}/attempts", KEY)
            statuses = [a["status"] for a in attempts["items"] if a["messageId"].replace("-", "").lower() == tries[0]["headers"]["webhook-id"][4:]]
            if 200 in statuses or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(sorted(statuses), [200, 500])

    def test_a_410_disables_the_endpoint_and_says_why(self):
        path, created = endpoint("gone")
        witness, _ = endpoint("ok")
        id = activity()
        RECEIVER.until(path, about(id))
        deadline = time.monotonic() + WAIT
        while True:
            _, shown = rest("GET", f"/v1/webhooks/{created['id']}", KEY)
            if shown["state"] == "disabled" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(shown["state"], "disabled")
        self.assertIn("410", shown["disabledReason"])
        before = len(RECEIVER.at(path))
        later = activity()
        RECEIVER.until(witness, about(later))
        self.assertEqual(len(RECEIVER.at(path)), before)

    def test_a_hanging_receiver_does_not_delay_another_endpoint(self):
        # Both on one host (one origin): a limit per host must not let one hold back the other.
        hang, held = endpoint("hang")
        quick, _ = endpoint("ok")
        ids = [activity() for _ in range(15)]
        RECEIVER.until(quick, lambda r: all(about(id)(r) for id in ids))
        # The hanging one holds at most 10 requests, has answered none of them, and none has
        # reached its 10 s limit yet: the quick one's events did not wait for them.
        with RECEIVER.lock:
            self.assertLessEqual(RECEIVER.most_hanging, 10)
            self.assertGreater(RECEIVER.hanging, 0)
        self.assertEqual(rest("GET", f"/v1/webhooks/{held['id']}/attempts", KEY)[1]["items"], [])

    def test_replay_sends_again_with_the_original_ids(self):
        path, created = endpoint("ok")
        id = activity()
        first = [r for r in RECEIVER.until(path, about(id)) if about(id)([r])][0]
        status, answer = rest("POST", f"/v1/webhooks/{created['id']}/replay", KEY, {"since": "1h"})
        self.assertEqual(status, 202, answer)
        self.assertGreaterEqual(answer["queued"], 1)
        again = RECEIVER.until(path, lambda r: sum(about(id)([x]) for x in r) >= 2)
        tries = [r for r in again if about(id)([r])]
        self.assertEqual(tries[1]["headers"]["webhook-id"], first["headers"]["webhook-id"])
        self.assertEqual(tries[1]["body"], first["body"])
        Webhook(created["secret"]).verify(tries[1]["body"], tries[1]["headers"])

    def test_another_tenants_endpoint_receives_nothing_of_this_one(self):
        rival, _ = endpoint("ok", "*", key=RIVAL_KEY)
        ours, _ = endpoint("ok", "*")
        id = activity()
        RECEIVER.until(ours, about(id))
        self.assertEqual(RECEIVER.at(rival), [])
        # Nor can the rival's key see or touch this tenant's endpoints.
        _, created = endpoint("ok")
        self.assertEqual(rest("GET", f"/v1/webhooks/{created['id']}", RIVAL_KEY)[0], 404)
        self.assertEqual(rest("DELETE", f"/v1/webhooks/{created['id']}", RIVAL_KEY)[0], 404)
        listed = rest("GET", "/v1/webhooks", RIVAL_KEY)[1]["items"]
        self.assertNotIn(created["id"], [e["id"] for e in listed])

    def test_refusals(self):
        self.assertEqual(rest("GET", "/v1/webhooks", BOB)[0], 403)
        self.assertEqual(rest("POST", "/v1/webhooks", BOB, {"url": RECEIVER.base + "/ok/x", "events": ["*"]})[0], 403)
        for url in ["http://169.254.169.254/latest", "http://[fd00:ec2::254]/", "ftp://example.com/", "http://user:pw@example.com/",
                    "not a url", "https://0.0.0.0/"]:
            status, problem = rest("POST", "/v1/webhooks", KEY, {"url": url, "events": ["*"]})
            self.assertEqual(status, 422, (url, problem))
        status, problem = rest("POST", "/v1/webhooks", KEY, {"url": RECEIVER.base + "/ok/x", "events": ["activity.nothing"]})
        self.assertEqual(status, 422, problem)
        # A redirect is not followed: the attempt records the 302, and it is tried again later.
        path, created = endpoint("redirect")
        id = activity()
        RECEIVER.until(path, about(id))
        deadline = time.monotonic() + WAIT
        while True:
            attempts = rest("GET", f"/v1/webhooks/{created['id']}/attempts", KEY)[1]["items"]
            if attempts or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(attempts[0]["status"], 302)

    def test_rotation_signs_with_both_secrets(self):
        path, created = endpoint("ok")
        status, rotated = rest("POST", f"/v1/webhooks/{created['id']}/rotate-secret", KEY)
        self.assertEqual(status, 200, rotated)
        self.assertNotEqual(rotated["secret"], created["secret"])
        id = activity()
        request = [r for r in RECEIVER.until(path, about(id)) if about(id)([r])][0]
        self.assertEqual(len(request["headers"]["webhook-signature"].split(" ")), 2)
        Webhook(created["secret"]).verify(request["body"], request["headers"])
        Webhook(rotated["secret"]).verify(request["body"], request["headers"])

    def test_pushes_cancelled_by_a_later_transition_are_told_as_superseded(self):
        path, _ = endpoint("ok", "notification.superseded")
        id = activity()
        # No provider is configured here: the assignment's pushes stay queued until the start
        # cancels them (or, should the start come first, fan-out records them superseded).
        deadline = time.monotonic() + WAIT
        while not rest("GET", f"/v1/history?activity={id}", KEY)[1]["items"] and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(rest("POST", f"/v1/activities/{id}/start", BOB, {})[0], 200)
        # One spelling of ids everywhere: the API's, the dispatcher's (written in SQL) and the
        # webhook's are the same lower-case text.
        self.assertEqual(id, id.lower())
        told = RECEIVER.until(path, lambda r: any(e["data"]["activityId"] == id for e in events(r)))
        event = next(e for e in events(told) if e["data"]["activityId"] == id)
        self.assertEqual(event["type"], "notification.superseded")
        self.assertEqual(event["data"]["event"], "activity.assigned")
        self.assertIn("superseded by activity.started", event["data"]["reason"])

    def test_zz_a_worker_killed_in_a_burst_loses_no_committed_event_and_the_rate(self):
        path, created = endpoint("ok")
        ids = [activity() for _ in range(60)]
        RECEIVER.until(path, lambda r: len({e["data"]["activity"]["id"] for e in events(r)} & set(ids)) >= 5)
        SERVER.kill()
        SERVER.start()
        restarted = time.monotonic()
        burst = set(ids)
        ids += [activity() for _ in range(20)]
        requests = RECEIVER.until(path, lambda r: set(ids) <= {e["data"]["activity"]["id"] for e in events(r)})
        # What the killed worker held comes once its short leases run out (they were 60 s: the
        # last event came 61.7 s after the restart).
        first_arrival = {}
        for request in requests:
            activity_id = json.loads(request["body"])["data"]["activity"]["id"]
            first_arrival.setdefault(activity_id, request["at"])
        last = max(first_arrival[i] for i in burst) - restarted
        print(f"\nwebhooks after a SIGKILL: the burst's last event {last:.1f} s after the restart", flush=True)
        self.assertLess(last, 30)
        # The rate: every message of this endpoint sent again at once (a replay).
        received = len(RECEIVER.at(path))
        cpu = SERVER.cpu_seconds()
        started = time.monotonic()
        status, answer = rest("POST", f"/v1/webhooks/{created['id']}/replay", KEY, {"since": "1h"})
        self.assertEqual(status, 202)
        queued = answer["queued"]
        RECEIVER.until(path, lambda r: len(r) >= received + queued)
        seconds = time.monotonic() - started
        used = SERVER.cpu_seconds() - cpu
        print(f"\nwebhook replay: {queued} events in {seconds:.2f} s = {queued / seconds:.0f} events/s; "
              f"herald serve --worker CPU {used * 1e6 / queued:.0f} µs an event", flush=True)


if __name__ == "__main__":
    unittest.main()
