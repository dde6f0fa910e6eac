"""Web Push end to end (docs/apps.md#web-push), against the real `herald` binary and a push service
written here: the body is decrypted with the `http_ece` package (PyPI) and the VAPID token is
verified with `cryptography`, not with Herald's own code. Run by scripts/webpush-test, which sets
the environment this reads (a HERALD_HOME that `herald demo` filled)."""

import base64
import json
import os
import stat
import subprocess
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

HERALD = os.environ["WEBPUSH_HERALD"]
WORK = os.environ["WEBPUSH_WORK"]
SUBJECT = "mailto:operator@herald.test"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def herald(*args, env=None, check=True):
    result = subprocess.run([HERALD, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"herald {' '.join(args)}: {result.returncode} {result.stderr}")
    return result


class PushService:
    """A push service on loopback: what it received, and the status it answers per path."""

    def __init__(self):
        self.received = []
        self.statuses = {}
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                service.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status = service.statuses.get(self.path, 201)
                self.send_response(status)
                if status == 201:
                    self.send_header("Location", f"/messages/{len(service.received)}")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


class Browser:
    """A browser's subscription: its own P-256 key and authentication secret."""

    def __init__(self, endpoint):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        public = self.key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        self.subscription = {"endpoint": endpoint, "expirationTime": None, "keys": {"p256dh": b64url(public), "auth": b64url(self.auth)}}


class WebPushTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.key_file = os.path.join(WORK, "vapid.pem")
        made = herald("webpush", "keys", "--out", cls.key_file)
        cls.public_key = made.stdout.strip().splitlines()[-1]
        cls.env = {
            "HERALD_WEBPUSH_KEY_FILE": cls.key_file, "HERALD_WEBPUSH_SUBJECT": SUBJECT,
            "HERALD_WEBPUSH_ALLOW_HTTP": "1", "HERALD_WEBPUSH_ALLOW_PRIVATE": "1",
        }

    def register(self, browser, email="bob@demo.test", env=None, check=True):
        return herald(
            "device", "register", "--user", email, "--app", "member", "--platform", "web", "--provider", "webpush",
            "--subscription", json.dumps(browser.subscription), env=self.env if env is None else env, check=check)

    def test_the_key_file_is_private_and_never_overwritten(self):
        mode = stat.S_IMODE(os.stat(self.key_file).st_mode)
        self.assertEqual(mode, 0o600)
        with open(self.key_file, "rb") as handle:
            key = serialization.load_pem_private_key(handle.read(), password=None)
        self.assertIsInstance(key.curve, ec.SECP256R1)
        public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        self.assertEqual(b64url(public), self.public_key)
        again = herald("webpush", "keys", "--out", self.key_file, check=False)
        self.assertNotEqual(again.returncode, 0)
        self.assertEqual(len(again.stderr.strip().splitlines()), 1, again.stderr)
        self.assertIn("exists", again.stderr)

    def test_an_endpoint_inside_is_refused_at_registration(self):
        strict = {k: v for k, v in self.env.items() if "ALLOW" not in k}
        for endpoint, env in [
            ("https://127.0.0.1/push/x", strict), ("https://10.0.0.7/push/x", strict), ("https://169.254.1.1/push/x", strict),
            ("http://169.254.169.254/latest/meta-data", self.env), ("http://push.example.net/x", strict),
        ]:
            refused = self.register(Browser(endpoint), env=env, check=False)
            self.assertNotEqual(refused.returncode, 0, endpoint)
            self.assertEqual(len(refused.stderr.strip().splitlines()), 1, refused.stderr)
            self.assertTrue(refused.stderr.startswith("herald: "), refused.stderr)
        listed = json.loads(herald("device", "list", "--user", "bob@demo.test", "--json").stdout)
        self.assertFalse(any(d["provider"] == "webpush" and "example" in d["tokenPreview"] for d in listed))

    def test_a_worker_without_the_key_says_web_push_is_not_configured(self):
        unconfigured = herald("dispatch", "--drain", env={"HERALD_LOG_LEVEL": "info"}, check=False)
        self.assertIn("Web Push is not configured", unconfigured.stderr)

    def test_push_test_reaches_a_browser_and_says_what_its_service_answered(self):
        service = PushService()
        try:
            browser = Browser(service.origin + "/push/tried")
            tried = herald("push", "test", "--provider", "webpush", "--subscription", json.dumps(browser.subscription), "--json", env=self.env)
            answer = json.loads(tried.stdout)
            self.assertEqual((answer["outcome"], answer["httpStatus"], answer["token"]), ("delivered", 201, service.origin))
            _, _, body = service.received[0]
            shown = json.loads(http_ece.decrypt(body, private_key=browser.key, auth_secret=browser.auth, version="aes128gcm"))
            self.assertEqual(shown["notification"]["title"], "Herald test")
            service.statuses["/push/tried"] = 410
            gone = herald("push", "test", "--provider", "webpush", "--subscription", json.dumps(browser.subscription), "--json", env=self.env, check=False)
            self.assertEqual(gone.returncode, 2)
            self.assertEqual(json.loads(gone.stdout)["outcome"], "dead token")
        finally:
            service.close()

    def test_a_push_decrypts_with_an_independent_implementation_and_its_vapid_token_verifies(self):
        service = PushService()
        try:
            browser = Browser(service.origin + "/push/bob-laptop")
            gone = Browser(service.origin + "/push/bob-old-browser")
            service.statuses["/push/bob-old-browser"] = 410
            self.register(browser)
            self.register(gone)
            # Bob's phone (FCM, not configured here) would hold the drain back: his browsers alone are told.
            herald("device", "remove", "--token", "bob-pixel-member-2b81d4")
            assigned = json.loads(herald(
                "activity", "assign", "--team", "field-ops", "--to", "bob@demo.test", "--name", "Interop <check> ✓",
                "--deadline", "2030-01-31", "--priority", "p2", "--as", "alice@demo.test", "--json").stdout)
            drained = herald("dispatch", "--drain", env={**self.env, "HERALD_LOG_LEVEL": "info"})
            # A worker says at start whether Web Push is configured, with the key pages subscribe with.
            self.assertIn(f"provider.webpush=configured; pages subscribe with the public key {self.public_key}", drained.stderr)
            bodies = {path: (headers, body) for path, headers, body in service.received}
            headers, body = bodies["/push/bob-laptop"]
            self.assertEqual(headers["content-encoding"], "aes128gcm")
            self.assertEqual(headers["urgency"], "normal")
            self.assertEqual(headers["topic"], assigned["id"].replace("-", "").lower())
            self.assertGreater(int(headers["ttl"]), 0)
            self.assertLessEqual(len(body), 4096)
            # The token: ES256 by the key pages subscribe with, for this origin, within a day.
            scheme, _, rest = headers["authorization"].partition(" ")
            self.assertEqual(scheme, "vapid")
            params = dict(part.strip().split("=", 1) for part in rest.split(","))
            self.assertEqual(params["k"], self.public_key)
            head, encoded_claims, signature = params["t"].split(".")
            self.assertEqual(json.loads(unb64url(head))["alg"], "ES256")
            claims = json.loads(unb64url(encoded_claims))
            self.assertEqual(claims["aud"], service.origin)
            self.assertEqual(claims["sub"], SUBJECT)
            self.assertTrue(time.time() < claims["exp"] <= time.time() + 86400)
            raw = unb64url(signature)
            verifier = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(params["k"]))
            verifier.verify(
                encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                f"{head}.{encoded_claims}".encode(), ec.ECDSA(hashes.SHA256()))
            # The body, decrypted by http_ece with the browser's private key and secret.
            plaintext = http_ece.decrypt(body, private_key=browser.key, auth_secret=browser.auth, version="aes128gcm")
            message = json.loads(plaintext)
            self.assertEqual(message["web_push"], 8030)
            self.assertIsInstance(message["app_badge"], int)
            shown = message["notification"]
            self.assertIn("Interop <check> ✓", shown["body"])
            self.assertTrue(shown["title"])
            self.assertEqual(shown["navigate"], "/activities/" + assigned["id"].lower())
            self.assertEqual(shown["data"]["activityId"], assigned["id"].lower())
            # The browser that unsubscribed (410) is deactivated, never tried again.
            devices = json.loads(herald("device", "list", "--user", "bob@demo.test", "--json").stdout)
            states = {d["id"]: d["state"] for d in devices if d["provider"] == "webpush"}
            self.assertEqual(sorted(states.values()), ["active", "deactivated"], devices)
            self.assertTrue(all(d["tokenPreview"] == service.origin for d in devices if d["provider"] == "webpush"))
        finally:
            service.close()


if __name__ == "__main__":
    unittest.main()
