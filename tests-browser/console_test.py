"""The admin console in headless Chromium (selenium), against `herald serve` on the demo
tenant that scripts/console-test prepares. Each test signs in on its own browser."""

import os
import re
import unittest
import urllib.request
from urllib.parse import urlparse

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

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

    def shoot(self, name):
        self.driver.save_screenshot(os.path.join(SHOTS, name + ".png"))

    def sign_in(self, token):
        self.driver.get(BASE + "/console/history")
        self.assertEqual(self.path(), "/console/sign-in")
        self.driver.find_element(By.ID, "token").send_keys(token)
        self.driver.find_element(By.ID, "sign-in").click()
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
        self.driver.find_element(By.ID, "filter").click()
        rows = self.rows()
        self.assertGreater(len(rows), 0)
        for row in rows:
            self.assertIn("carol@demo.test", row.text)
            self.assertEqual(row.find_element(By.CSS_SELECTOR, "td.status").text.split("\n")[0], "sent")
        self.shoot("3-history-carol-sent")

        # The one whose old Android was dead: its attempts, and the provider's words.
        dead = [row for row in rows if "dead_token" in row.text]
        self.assertTrue(dead, "no notification of Carol's mentions her dead token")
        dead[0].find_element(By.CSS_SELECTOR, "td a").click()
        self.assertTrue(self.path().startswith("/console/notifications/"))
        attempts = self.driver.find_elements(By.CSS_SELECTOR, "table.attempts tbody tr")
        self.assertGreaterEqual(len(attempts), 2)
        outcomes = [row.find_element(By.CSS_SELECTOR, "td.outcome").text for row in attempts]
        self.assertIn("dead_token", outcomes)
        self.assertIn("UNREGISTERED", self.driver.find_element(By.TAG_NAME, "main").text)
        self.shoot("4-notification")

        self.driver.find_element(By.ID, "sign-out").click()
        self.assertEqual(self.path(), "/console/sign-in")
        # The old session is gone: the history asks to sign in again.
        self.driver.get(BASE + "/console/history")
        self.assertEqual(self.path(), "/console/sign-in")

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
        self.shoot("5-member-not-found")

    def test_a_form_without_its_csrf_token_is_refused(self):
        self.sign_in(os.environ["CONSOLE_ADA"])
        self.driver.execute_script("document.querySelector('header form input[name=csrf]').remove()")
        self.driver.find_element(By.ID, "sign-out").click()
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "h1").text, "Refused")
        self.assertIn("CSRF", self.driver.find_element(By.TAG_NAME, "main").text)
        # Still signed in: the refused form changed nothing.
        self.driver.get(BASE + "/console/history")
        self.assertEqual(self.path(), "/console/history")

    def test_a_wrong_token_is_refused_in_words(self):
        self.driver.get(BASE + "/console/sign-in")
        self.driver.find_element(By.ID, "token").send_keys("hrp_notatoken")
        self.driver.find_element(By.ID, "sign-in").click()
        self.assertIn("Not signed in", self.driver.find_element(By.CSS_SELECTOR, "p.error").text)
        self.driver.get(BASE + "/console/history")
        self.assertEqual(self.path(), "/console/sign-in")

    def test_markup_in_a_name_shows_as_text(self):
        self.sign_in(os.environ["CONSOLE_MALLORY"])
        self.assertIn("<script>alert(1)</script>", self.driver.find_element(By.CSS_SELECTOR, "header .who").text)
        with self.assertRaises(NoAlertPresentException):
            self.driver.switch_to.alert.text
        self.assertIsNone(re.search(r"<script>alert", self.driver.page_source.split("<main>")[0].split("</head>")[1]))

    def test_an_inline_script_does_not_run(self):
        # The policy allows no script at all: one slipped into the page stays inert.
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
