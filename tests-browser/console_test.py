"""The admin console in headless Chromium (selenium), against `herald serve` on the demo
tenant that scripts/console-test prepares. Each test signs in on its own browser."""

import json
import os
import re
import unittest
import urllib.error
import urllib.request
from urllib.parse import quote, urlparse

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE = os.environ["CONSOLE_URL"]
SHOTS = os.environ["HERALD_SCREENSHOTS"]


def browser():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"))


class ConsoleTest(unittest.TestCase):
    def setUp(self):
        self.driver = browser()
        self.addCleanup(self.driver.quit)

    def path(self):
        return urlparse(self.driver.current_url).path

    def follow(self, element):
        """Clicks a link or a submit button and waits for the next page: a click returns
        before the browser has loaded what it leads to."""
        # A mark on this page's window; the next page has a window of its own without it.
        self.driver.execute_script("window.heraldOldPage = true")
        element.click()
        WebDriverWait(self.driver, 20, ignored_exceptions=(WebDriverException,)).until(
            lambda driver: driver.execute_script("return !window.heraldOldPage && document.readyState === 'complete'"))

    def shoot(self, name):
        self.driver.save_screenshot(os.path.join(SHOTS, name + ".png"))

    def sign_in(self, token):
        self.driver.get(BASE + "/console/history")
        self.assertEqual(self.path(), "/console/sign-in")
        self.driver.find_element(By.ID, "token").send_keys(token)
        self.follow(self.driver.find_element(By.ID, "sign-in"))
        self.assertEqual(self.path(), "/console/history")

    def rows(self):
        return self.driver.find_elements(By.CSS_SELECTOR, "#history tbody tr[class^=status-]")

    def test_an_admin_signs_in_filters_opens_a_notification_and_signs_out(self):
        self.driver.get(BASE + "/console/sign-in")
        self.shoot("1-sign-in")
        self.sign_in(os.environ["CONSOLE_ADA"])
        self.assertGreater(len(self.rows()), 10)
        self.assertIn("Ada Admin", self.driver.find_element(By.CSS_SELECTOR, "header .who").text)
        self.shoot("2-history")

        # Carol's notifications that were sent: only hers, only sent.
        self.driver.find_element(By.ID, "filter-user").send_keys("carol@demo.test")
        Select(self.driver.find_element(By.ID, "filter-status")).select_by_value("sent")
        self.follow(self.driver.find_element(By.ID, "filter"))
        rows = self.rows()
        self.assertGreater(len(rows), 0)
        for row in rows:
            self.assertIn("carol@demo.test", row.text)
            self.assertEqual(row.find_element(By.CSS_SELECTOR, "td.status").text.split("\n")[0], "sent")
        self.shoot("3-history-carol-sent")

        # The one whose old Android was dead: its attempts, and the provider's words.
        dead = [row for row in rows if "dead_token" in row.text]
        self.assertTrue(dead, "no notification of Carol's mentions her dead token")
        self.follow(dead[0].find_element(By.CSS_SELECTOR, "td a"))
        self.assertTrue(self.path().startswith("/console/notifications/"))
        attempts = self.driver.find_elements(By.CSS_SELECTOR, "table.attempts tbody tr")
        self.assertGreaterEqual(len(attempts), 2)
        outcomes = [row.find_element(By.CSS_SELECTOR, "td.outcome").text for row in attempts]
        self.assertIn("dead_token", outcomes)
        self.assertIn("UNREGISTERED", self.driver.find_element(By.TAG_NAME, "main").text)
        self.shoot("4-notification")

        # Its activity: every step, who was told on which device, and the dead token's reason.
        self.follow(self.driver.find_element(By.LINK_TEXT, "the activity"))
        self.assertTrue(self.path().startswith("/console/activities/"))
        steps = self.driver.find_elements(By.CSS_SELECTOR, "#timeline > li")
        self.assertGreaterEqual(len(steps), 4)
        self.assertIn("assign", steps[0].text)
        # Each step lists the notifications of its own event only (the demo completes twice).
        for step in steps:
            action = step.find_element(By.CSS_SELECTOR, "p strong").text
            for link in step.find_elements(By.CSS_SELECTOR, "table.notified td:first-child a"):
                self.assertTrue(link.text.startswith("activity."), link.text)
            if action == "complete":
                self.assertEqual(len(step.find_elements(By.CSS_SELECTOR, "table.notified tbody tr")), 1)
        dead_devices = self.driver.find_elements(By.CSS_SELECTOR, ".device.status-dead_token")
        self.assertTrue(dead_devices)
        self.assertIn("UNREGISTERED", dead_devices[0].text)
        # Its reminders: the deadline's two, each due, sent, or ended with the reason why.
        reminders = [row.text for row in self.driver.find_elements(By.CSS_SELECTOR, "#reminders tbody tr")]
        self.assertTrue(any("activity.deadline_soon" in row for row in reminders), reminders)
        self.assertTrue(any("activity.overdue" in row for row in reminders), reminders)
        self.shoot("5-activity")

        # Carol herself: her old Android, deactivated, with when and why.
        self.follow(self.driver.find_element(By.CSS_SELECTOR, "main p.meta a[href^='/console/people/']"))
        self.assertEqual(self.path(), "/console/people/carol@demo.test")
        dead = self.driver.find_element(By.CSS_SELECTOR, "#devices tr.device-deactivated")
        self.assertIn("UNREGISTERED", dead.find_element(By.CSS_SELECTOR, "td.state").text)
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#devices tr.device-active")), 1)
        self.assertNotIn("admin", self.driver.find_element(By.CSS_SELECTOR, "main p.meta").text)
        self.shoot("6-person")

        # The tenant's numbers: totals, three charts drawn on the server, no paused provider.
        self.follow(self.driver.find_element(By.ID, "stats-link"))
        self.assertEqual(self.path(), "/console/stats")
        charts = self.driver.find_elements(By.CSS_SELECTOR, "svg.chart")
        self.assertEqual(len(charts), 4)
        for chart in charts:
            self.assertGreater(len(chart.find_elements(By.CSS_SELECTOR, "rect.bar")), 0)
        totals = self.driver.find_element(By.ID, "totals").text
        self.assertIn("Dead tokens 1", totals)
        self.assertIn("None", self.driver.find_element(By.ID, "pauses").text)
        # Bob opened his P0's push in the demo: its kind shows an opening, with a time to open.
        opens = [row.text for row in self.driver.find_elements(By.CSS_SELECTOR, "#opens tbody tr")]
        p0 = [row for row in opens if row.startswith("activity.assigned member P0")]
        self.assertEqual(len(p0), 1, opens)
        self.assertRegex(p0[0], r"^activity\.assigned member P0 1 1 100\.0 % \d", opens)
        self.shoot("7-stats")

        self.follow(self.driver.find_element(By.ID, "sign-out"))
        self.assertEqual(self.path(), "/console/sign-in")
        # The old session is gone: the history asks to sign in again.
        self.driver.get(BASE + "/console/history")
        self.assertEqual(self.path(), "/console/sign-in")

    def test_a_notification_shows_what_its_recipient_did_with_it(self):
        """Bob tapped his P0's push in the demo: its page says so, on his Pixel; Carol's says
        nothing was reported."""
        self.sign_in(os.environ["CONSOLE_ADA"])
        self.driver.get(BASE + "/console/history?user=bob%40demo.test&event=activity.assigned")
        rows = [row for row in self.rows() if "Replace the pump seal" in row.text]
        self.assertEqual(len(rows), 1, [row.text for row in self.rows()])
        self.follow(rows[0].find_element(By.CSS_SELECTOR, "td a"))
        steps = self.driver.find_elements(By.CSS_SELECTOR, "#engagement li")
        self.assertEqual([step.get_attribute("class") for step in steps], ["step-seen", "step-opened", "step-read"])
        self.assertIn("on android", steps[1].text)
        self.shoot("4b-engagement")
        self.driver.get(BASE + "/console/history?user=carol%40demo.test&event=activity.assigned")
        self.follow(self.rows()[0].find_element(By.CSS_SELECTOR, "td a"))
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#engagement li"), [])
        self.assertIn("Nothing reported yet", self.driver.find_element(By.TAG_NAME, "main").text)

    def test_alices_digest_shows_on_her_page_and_in_the_history(self):
        self.sign_in(os.environ["CONSOLE_ADA"])
        self.driver.get(BASE + "/console/people/alice@demo.test")
        self.assertEqual(self.driver.find_element(By.ID, "digest-window").text, "1h")
        settings = [row.text for row in self.driver.find_elements(By.CSS_SELECTOR, "#settings tbody tr")]
        self.assertEqual(settings, ["activity.started manager digest own"])
        sent = self.driver.find_elements(By.CSS_SELECTOR, "#digests tr.digest-sent")
        self.assertEqual(len(sent), 1)
        self.assertIn("Field Ops", sent[0].text)
        self.assertIn("3", sent[0].text)
        self.shoot("8-digests")
        # Its history: the three starts it gathered, and its own push.
        self.follow(sent[0].find_element(By.CSS_SELECTOR, "td a[href*='digest=']"))
        self.assertEqual(self.path(), "/console/history")
        rows = self.rows()
        self.assertEqual(sorted(row.get_attribute("class") for row in rows), ["status-digested"] * 3 + ["status-sent"])
        self.assertTrue(all("the digest" in row.text for row in rows), [row.text for row in rows])
        gathered = [row.text for row in rows if row.get_attribute("class") == "status-digested"]
        self.assertTrue(all("in the digest sent at" in text for text in gathered), gathered)
        pushed = [row for row in rows if row.get_attribute("class") == "status-sent"][0]
        self.assertIn("Field Ops: 3 updates", pushed.text)
        # The push itself: a notification with its deliveries to Alice's iPhone and to her
        # laptop's browser (Web Push), which shows only its push service's origin.
        self.follow(pushed.find_element(By.CSS_SELECTOR, "td a[href^='/console/notifications/']"))
        self.assertIn("digest", self.driver.find_element(By.CSS_SELECTOR, "#payload").text)
        deliveries = [article.text for article in self.driver.find_elements(By.CSS_SELECTOR, "article.delivery")]
        self.assertEqual(len(deliveries), 2, deliveries)
        browser = [text for text in deliveries if "webpush" in text]
        self.assertEqual(len(browser), 1, deliveries)
        self.assertIn("http://127.0.0.1:", browser[0])
        self.assertNotIn("/webpush/", browser[0])

    def test_a_person_changes_their_own_pushes_and_no_one_elses(self):
        self.sign_in(os.environ["CONSOLE_BOB"])
        self.driver.get(BASE + "/console/people/bob@demo.test")
        Select(self.driver.find_element(By.ID, "window")).select_by_value("daily 08:00")
        Select(self.driver.find_element(By.NAME, "mode.activity.deadline_soon.member")).select_by_value("digest")
        self.follow(self.driver.find_element(By.ID, "save-preferences"))
        self.assertEqual(self.path(), "/console/people/bob@demo.test")
        self.assertEqual(self.driver.find_element(By.ID, "digest-window").text, "daily 08:00")
        settings = [row.text for row in self.driver.find_elements(By.CSS_SELECTOR, "#settings tbody tr")]
        self.assertEqual(settings, ["activity.deadline_soon member digest own"])
        # The same form aimed at Alice's page is refused, and hers stays as it was.
        self.driver.execute_script(
            "document.getElementById('preferences').action = '/console/people/alice@demo.test/preferences'")
        self.follow(self.driver.find_element(By.ID, "save-preferences"))
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "h1").text, "Refused")
        self.driver.delete_all_cookies()
        # An admin sees Alice's choices, and no form to change them.
        self.sign_in(os.environ["CONSOLE_ADA"])
        self.driver.get(BASE + "/console/people/alice@demo.test")
        self.assertEqual(self.driver.find_element(By.ID, "digest-window").text, "1h")
        self.assertEqual(self.driver.find_elements(By.ID, "preferences"), [])

    def test_a_member_cannot_open_another_persons_notification(self):
        # Ada finds a notification of Carol's…
        self.sign_in(os.environ["CONSOLE_ADA"])
        self.driver.get(BASE + "/console/history?user=carol@demo.test")
        link = self.rows()[0].find_element(By.CSS_SELECTOR, "td a").get_attribute("href")
        self.driver.delete_all_cookies()
        # …which Bob, a member, may not see: the same page as for nothing at all.
        self.sign_in(os.environ["CONSOLE_BOB"])
        for row in self.rows():
            self.assertIn("bob@demo.test", row.text)
        self.driver.get(link)
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "h1").text, "Not found")
        self.assertNotIn("carol@demo.test", self.driver.page_source)
        self.shoot("8-member-not-found")
        self.assertEqual(self.driver.find_elements(By.ID, "stats-link"), [])
        self.driver.get(BASE + "/console/stats")
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "h1").text, "Admins only")
        # Nor Carol's devices; his own page he may open.
        self.driver.get(BASE + "/console/people/carol@demo.test")
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "h1").text, "Not found")
        self.driver.get(BASE + "/console/people/bob@demo.test")
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "h1").text, "Bob Stone")

    def test_webhooks_are_listed_for_admins_only(self):
        self.sign_in(os.environ["CONSOLE_ADA"])
        self.follow(self.driver.find_element(By.ID, "webhooks-link"))
        self.assertEqual(self.path(), "/console/webhooks")
        section = self.driver.find_element(By.CSS_SELECTOR, "section.webhook")
        self.assertIn("https://hooks.example.com/herald", section.find_element(By.TAG_NAME, "h2").text)
        self.assertEqual(section.find_element(By.CSS_SELECTOR, "td.state").text, "active")
        self.assertIn("<script>alert(2)</script>", section.text)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "main script"), [])
        self.assertIn("No attempts yet.", section.text)
        self.driver.delete_all_cookies()
        self.sign_in(os.environ["CONSOLE_BOB"])
        self.assertEqual(self.driver.find_elements(By.ID, "webhooks-link"), [])
        self.driver.get(BASE + "/console/webhooks")
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "h1").text, "Admins only")
        self.assertNotIn("hooks.example.com", self.driver.page_source)

    def test_a_form_without_its_csrf_token_is_refused(self):
        self.sign_in(os.environ["CONSOLE_ADA"])
        self.driver.execute_script("document.querySelector('header form input[name=csrf]').remove()")
        self.follow(self.driver.find_element(By.ID, "sign-out"))
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "h1").text, "Refused")
        self.assertIn("CSRF", self.driver.find_element(By.TAG_NAME, "main").text)
        # Still signed in: the refused form changed nothing.
        self.driver.get(BASE + "/console/history")
        self.assertEqual(self.path(), "/console/history")

    def test_a_wrong_token_is_refused_in_words(self):
        self.driver.get(BASE + "/console/sign-in")
        self.driver.find_element(By.ID, "token").send_keys("hrp_notatoken")
        self.follow(self.driver.find_element(By.ID, "sign-in"))
        self.assertIn("Not signed in", self.driver.find_element(By.CSS_SELECTOR, "p.error").text)
        self.driver.get(BASE + "/console/history")
        self.assertEqual(self.path(), "/console/sign-in")

    def test_markup_in_a_name_shows_as_text(self):
        self.sign_in(os.environ["CONSOLE_MALLORY"])
        self.assertIn("<script>alert(1)</script>", self.driver.find_element(By.CSS_SELECTOR, "header .who").text)
        with self.assertRaises(NoAlertPresentException):
            self.driver.switch_to.alert.text
        self.assertIsNone(re.search(r"<script>alert", self.driver.page_source.split("<main>")[0].split("</head>")[1]))

    def test_markup_hidden_in_grapheme_clusters_shows_as_text(self):
        # U+0600 before `<` makes one grapheme cluster of the two: an escape that compares
        # whole characters let it through, and the page redirected to another site.
        planted = "\u0600<meta http-equiv=refresh content=0;url=http://127.0.0.1:9/x\u0600>"
        self.sign_in(os.environ["CONSOLE_EVE"])
        self.assertIn("<meta http-equiv=refresh", self.driver.find_element(By.CSS_SELECTOR, "header .who").text)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "meta[content*='url=']"), [])
        self.driver.get(BASE + "/console/history?user=" + quote(planted))
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "meta[content*='url=']"), [])
        self.assertIn("<meta http-equiv=refresh", self.driver.find_element(By.CSS_SELECTOR, "p.error").text)
        self.assertEqual(urlparse(self.driver.current_url).hostname, urlparse(BASE).hostname)

    def test_a_step_whose_event_is_still_queued_says_so(self):
        # Before a worker fans the event out there is no notification: the page says the step
        # is queued and whom it will consider, not that nobody was notified.
        self.sign_in(os.environ["CONSOLE_ADA"])
        self.driver.get(BASE + "/console/activities/" + os.environ["CONSOLE_QUEUED_ACTIVITY"])
        queued = self.driver.find_element(By.CSS_SELECTOR, "#timeline p.queued").text
        self.assertIn("Queued since", queued)
        self.assertIn("Bob Stone", queued)
        self.assertNotIn("Nobody was notified", self.driver.find_element(By.ID, "timeline").text)

    def test_the_history_page_refreshes_from_the_live_channel(self):
        self.sign_in(os.environ["CONSOLE_ADA"])
        # The page's script holds the console's live socket: its note shows once it is open.
        WebDriverWait(self.driver, 20).until(lambda driver: driver.find_element(By.ID, "live-note").is_displayed())
        # Nothing is pending: the page has no timed refresh of its own; only the feed reloads it.
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "meta[http-equiv=refresh]"), [])
        table = self.driver.find_element(By.ID, "history")
        request = urllib.request.Request(BASE + "/v1/activities", method="POST", data=json.dumps({
            "team": "field-ops", "assignee": "bob@demo.test", "name": "Live refresh", "deadline": "2031-01-31"}).encode())
        request.add_header("Authorization", "Bearer " + os.environ["CONSOLE_ADA"])
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request) as answer:
            self.assertEqual(answer.status, 201)
        # The transition's frame reaches the page, which loads itself again.
        WebDriverWait(self.driver, 30).until(EC.staleness_of(table))
        WebDriverWait(self.driver, 20).until(lambda driver: driver.execute_script("return document.readyState") == "complete")
        self.assertEqual(self.path(), "/console/history")
        self.shoot("9-live-refresh")

    def test_the_live_socket_is_for_this_origin_only(self):
        # Another origin's page cannot open the console's socket with its cookie.
        request = urllib.request.Request(BASE + "/console/live", headers={
            "Origin": "https://evil.example", "Connection": "Upgrade", "Upgrade": "websocket",
            "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        self.assertEqual(refused.exception.code, 403)

    def test_an_inline_script_does_not_run(self):
        # The policy allows the console's own script files only: one slipped into the page stays inert.
        self.driver.get(BASE + "/console/sign-in")
        self.driver.execute_script(
            "const s = document.createElement('script'); s.textContent = 'document.title = \\'ran\\''; document.head.appendChild(s)")
        self.assertNotEqual(self.driver.title, "ran")
        with urllib.request.urlopen(BASE + "/console/sign-in") as answer:
            policy = answer.headers["Content-Security-Policy"]
        self.assertIn("default-src 'none'", policy)
        self.assertIn("frame-ancestors 'none'", policy)


if __name__ == "__main__":
    unittest.main()
