"""Email end to end (docs/notifications.md#email), run by scripts/email-test.

The real `herald` binary sends to aiosmtpd, an SMTP server that is not Herald's, over a real
socket; every message is read with Python's `email` package as a mail client would.
"""

import datetime
import email
import email.policy
import json
import os
import socket
import ssl
import subprocess
import time
import unittest
import urllib.error
import urllib.request
import uuid

from aiosmtpd.controller import Controller

HERALD = os.environ["EMAIL_HERALD"]
WORK = os.environ["EMAIL_WORK"]
DEADLINE = (datetime.date.today() + datetime.timedelta(days=30)).isoformat()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Relay:
    """aiosmtpd's handler: keeps what it takes; `rules` answer RCPT for an address instead of
    250 (a list is used up reply by reply, a string is given every time)."""

    def __init__(self):
        self.messages = []
        self.rules = {}

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        rule = self.rules.get(address)
        if isinstance(rule, list) and rule:
            return rule.pop(0)
        if isinstance(rule, str):
            return rule
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(
            {
                "from": envelope.mail_from,
                "to": list(envelope.rcpt_tos),
                "message": email.message_from_bytes(envelope.content, policy=email.policy.default),
                "raw": envelope.content,
                "tls": session.ssl is not None,
            }
        )
        return "250 2.0.0 Ok: queued as Q%d" % len(self.messages)


def start_relay(tls=False):
    relay = Relay()
    port = free_port()
    if tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(os.path.join(WORK, "relay.pem"), os.path.join(WORK, "relay.key"))
        controller = Controller(relay, hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True)
    else:
        controller = Controller(relay, hostname="127.0.0.1", port=port)
    controller.start()
    return relay, controller, port


def herald(*arguments, tenant=None, env=None, check=True):
    environment = dict(os.environ)
    if tenant:
        environment["HERALD_TENANT"] = tenant
    environment.update(env or {})
    done = subprocess.run([HERALD, *arguments], env=environment, capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError("herald %s: %s" % (" ".join(arguments), done.stderr))
    return done


class EmailTest(unittest.TestCase):
    def setUp(self):
        self.tenant = "mail-" + uuid.uuid4().hex[:8]
        herald("tenant", "create", self.tenant, "--name", "Mail")
        herald("team", "create", "crew", "--name", "Crew", tenant=self.tenant)
        for address, name, role in [("alice", "Alice Moreau", "manager"), ("erin", "Erin Prüfer", "member")]:
            herald("user", "add", self.email(address), "--name", name, tenant=self.tenant)
            herald("team", "add-member", "crew", self.email(address), "--role", role, tenant=self.tenant)
        self.serve_port = free_port()
        self.controllers = []

    def tearDown(self):
        for controller in self.controllers:
            controller.stop()

    def email(self, name):
        return "%s@%s.test" % (name, self.tenant)

    def relay(self, tls=False):
        relay, controller, port = start_relay(tls)
        self.controllers.append(controller)
        return relay, port

    def mail_env(self, port, plain=True, ca=False):
        env = {
            "HERALD_SMTP_URL": "smtp://127.0.0.1:%d" % port,
            "HERALD_EMAIL_FROM": "Herald <herald@mail.test>",
            "HERALD_APP_URL": "https://app.mail.test",
            "HERALD_PUBLIC_URL": "http://127.0.0.1:%d" % self.serve_port,
        }
        if plain:
            env["HERALD_SMTP_ALLOW_PLAIN"] = "1"
        if ca:
            env["HERALD_CA_FILE"] = os.path.join(WORK, "relay.pem")
        return env

    def assign(self, name, to="erin", priority="p2"):
        done = herald(
            "activity", "assign", "--as", self.email("alice"), "--team", "crew", "--to", self.email(to), "--name", name,
            "--deadline", DEADLINE, "--priority", priority, tenant=self.tenant)
        return done.stdout.strip()

    def drain(self, env, wait="5s"):
        return herald("dispatch", "--drain", "--wait", wait, "--only-tenant", self.tenant, tenant=self.tenant, env=env, check=False)

    def history(self, as_whom="alice"):
        done = herald("history", "--as", self.email(as_whom), "--json", "--limit", "100", tenant=self.tenant)
        return json.loads(done.stdout)

    def test_an_assignment_to_someone_without_a_phone_is_an_email_mail_clients_accept(self):
        relay, port = self.relay()
        name = "Prüfung 🔥 <b>& the pumps"
        activity = self.assign(name, priority="p0")
        self.assertEqual(self.drain(self.mail_env(port)).returncode, 0)
        self.assertEqual(len(relay.messages), 1)
        got = relay.messages[0]
        self.assertEqual(got["to"], [self.email("erin")])
        self.assertEqual(got["from"], "herald@mail.test")
        message = got["message"]
        self.assertEqual(message["To"].addresses[0].display_name, "Erin Prüfer")
        self.assertEqual(message["To"].addresses[0].addr_spec, self.email("erin"))
        self.assertEqual(message["From"].addresses[0].display_name, "Herald")
        self.assertTrue(message["Subject"].startswith("[P0] "), message["Subject"])
        self.assertIn(name, message["Subject"])
        self.assertNotIn("\n", str(message["Subject"]))
        self.assertRegex(message["Message-ID"], r"^<[0-9a-f-]{36}@mail\.test>$")
        thread = "<activity-%s@mail.test>" % activity
        self.assertEqual(message["In-Reply-To"], thread)
        self.assertEqual(message["References"], thread)
        self.assertTrue(message["List-Unsubscribe"].startswith("<http://127.0.0.1:%d/v1/email/unsubscribe?token=" % self.serve_port))
        self.assertEqual(message["List-Unsubscribe-Post"], "List-Unsubscribe=One-Click")
        self.assertEqual(message.get_content_type(), "multipart/alternative")
        self.assertIsNone(message["Bcc"])
        text = message.get_body(preferencelist=("plain",)).get_content()
        html = message.get_body(preferencelist=("html",)).get_content()
        self.assertIn(name, text)
        self.assertIn("https://app.mail.test/activities/%s" % activity, text)
        self.assertIn("Prüfung 🔥 &lt;b&gt;&amp; the pumps", html)
        self.assertNotIn("<b>&", html)
        # Every raw line within RFC 5322's limit, in CRLF.
        for line in got["raw"].split(b"\r\n"):
            self.assertLessEqual(len(line), 998)
        # Erin starts it: Alice (no phone either) is told by email, in the same thread.
        token = herald("token", "create", "--user", self.email("erin"), "--name", "t", tenant=self.tenant).stdout.strip().splitlines()[-1]
        herald("activity", "start", activity, "--as", self.email("erin"), tenant=self.tenant)
        self.drain(self.mail_env(port))
        self.assertEqual([m["to"] for m in relay.messages], [[self.email("erin")], [self.email("alice")]])
        self.assertEqual(relay.messages[1]["message"]["References"], thread)
        self.assertNotEqual(relay.messages[1]["message"]["Message-ID"], message["Message-ID"])
        self.assertTrue(token)

    def test_starttls_is_required_unless_allowed(self):
        relay, port = self.relay()
        activity = self.assign("Over TLS only")
        done = self.drain(self.mail_env(port, plain=False), wait="1s")
        self.assertEqual(relay.messages, [])
        self.assertNotEqual(done.returncode, 0)
        why = herald("why", "--activity", activity, "--as", self.email("alice"), "--json", tenant=self.tenant).stdout
        self.assertIn("STARTTLS is required", why)
        # A relay that offers STARTTLS, with its certificate trusted: sent over TLS.
        secure, secure_port = self.relay(tls=True)
        self.assertEqual(self.drain(self.mail_env(secure_port, plain=False, ca=True), wait="10s").returncode, 0)
        self.assertEqual(len(secure.messages), 1)
        self.assertTrue(secure.messages[0]["tls"])

    def test_a_451_is_tried_again_and_a_550_fails(self):
        relay, port = self.relay()
        relay.rules[self.email("erin")] = ["451 4.3.0 Try again later"]
        self.assign("Later")
        self.drain(self.mail_env(port), wait="30s")
        self.assertEqual(len(relay.messages), 1)
        later = [e for e in self.history() if e["recipient"]["email"] == self.email("erin")]
        self.assertEqual(later[0]["status"], "sent")
        relay.rules[self.email("erin")] = "550 5.1.1 No such user"
        self.assign("Never")
        self.drain(self.mail_env(port))
        self.assertEqual(len(relay.messages), 1)
        entries = [e for e in self.history() if e["recipient"]["email"] == self.email("erin")]
        self.assertEqual(sorted(e["status"] for e in entries), ["failed", "sent"])

    def test_one_click_unsubscribe_works_once_without_credentials_and_refuses_a_forged_link(self):
        relay, port = self.relay()
        env = dict(os.environ, HERALD_TENANT=self.tenant, **self.mail_env(port))
        with open(os.path.join(WORK, "serve.out"), "w") as out:
            serve = subprocess.Popen([HERALD, "serve", "--port", str(self.serve_port)], env=env, stdout=out, stderr=subprocess.STDOUT)
        with open(os.path.join(WORK, "serve.pid"), "w") as pid:
            pid.write(str(serve.pid))
        try:
            for _ in range(600):
                with open(os.path.join(WORK, "serve.out")) as out:
                    if out.read().startswith("http"):
                        break
                time.sleep(0.1)
            self.assign("Unsubscribe me")
            self.drain(self.mail_env(port))
            link = relay.messages[0]["message"]["List-Unsubscribe"].strip("<>")
            # GET shows the button and changes nothing.
            with urllib.request.urlopen(link) as page:
                self.assertEqual(page.status, 200)
                self.assertIn('method="post"', page.read().decode())
            self.assertEqual(self.channel(), "push")
            # A forged link: the signature's last character changed.
            forged = link[:-1] + ("A" if link[-1] != "A" else "B")
            with self.assertRaises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(urllib.request.Request(forged, data=b"List-Unsubscribe=One-Click", method="POST"))
            self.assertEqual(refused.exception.code, 403)
            self.assertEqual(refused.exception.headers["Content-Type"], "application/problem+json")
            self.assertEqual(self.channel(), "push")
            # The real one, as a mail client posts it: no credentials.
            request = urllib.request.Request(
                link, data=b"List-Unsubscribe=One-Click", method="POST",
                headers={"Content-Type": "application/x-www-form-urlencoded"})
            with urllib.request.urlopen(request) as done:
                self.assertEqual(done.status, 200)
                self.assertIn("no more emails", done.read().decode())
            self.assertEqual(self.channel(), "push_only")
            self.assign("Not by email any more")
            self.drain(self.mail_env(port))
            self.assertEqual(len(relay.messages), 1)
        finally:
            serve.terminate()
            serve.wait(timeout=60)

    def channel(self):
        done = herald("prefs", "show", "--as", self.email("erin"), "--json", tenant=self.tenant)
        entries = json.loads(done.stdout)["entries"]
        return next(e["channel"] for e in entries if e["event"] == "activity.assigned" and e["app"] == "member")

    def test_cr_and_lf_cannot_reach_a_header(self):
        done = herald("user", "add", self.email("mallory"), "--name", "Mallory\r\nBcc: victim@evil.test", tenant=self.tenant, check=False)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("control character", done.stderr)
        done = herald(
            "activity", "assign", "--as", self.email("alice"), "--team", "crew", "--to", self.email("erin"),
            "--name", "Pumps\nBcc: victim@evil.test", "--deadline", DEADLINE, tenant=self.tenant, check=False)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("control character", done.stderr)


if __name__ == "__main__":
    unittest.main()
