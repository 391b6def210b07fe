"""Sends one push from FakeParse's dashboard in headless Chromium, as a person would during a run: the
master key, the composer, a segment of iOS devices, the JSON message, Send. Prints the push's
_PushStatus id and the recipient count the composer showed, as JSON.

Usage: send_from_dashboard.py DASHBOARD_URL MASTER_KEY JSON_MESSAGE SCREENSHOT
"""

import json
import sys

import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait


def main():
    url, master_key, message, screenshot = sys.argv[1:5]
    driver = chromium.start(1280, 1000)
    wait = WebDriverWait(driver, 30)
    css = lambda selector: driver.find_element(By.CSS_SELECTOR, selector)  # noqa: E731
    try:
        driver.get(url)
        wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")
        css("#master-key").send_keys(master_key, Keys.ENTER)
        wait.until(lambda d: css("#installation-count").text)
        css("button[data-tab=compose]").click()
        css("input[name=audience][value=segment]").click()
        label = "document.querySelector('#recipient-count').dataset"
        wait.until(lambda d: d.execute_script(f"return {label}.answered") == d.execute_script(f"return {label}.asked")
                   and d.execute_script(f"return {label}.pending") is None)
        recipients = int(css("#recipient-count").get_attribute("data-count"))
        css("input[name=messageType][value=json]").click()
        css("#message").send_keys(message)
        wait.until(lambda d: css("#send").is_enabled())
        css("#send").click()
        wait.until(lambda d: css("#send-result").get_attribute("data-push-id") or css("#send-error").text)
        driver.save_screenshot(screenshot)
        print(json.dumps({"pushId": css("#send-result").get_attribute("data-push-id"), "recipients": recipients,
                          "error": css("#send-error").text}))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
