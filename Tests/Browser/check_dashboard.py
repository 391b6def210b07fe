"""Drives FakeParse's dashboard in headless Chromium (through chromedriver) as a person would, and
prints what it saw as JSON for a Swift test to judge: the key asked for, the installations and their
filter, the composer's live recipient count for each audience, its JSON warning and validation, the
confirmation before sending to everyone (cancelled, then given), the push's details with each device's
APNs answer, and the live feed. Screenshots of each page go to SCREENSHOT_DIR.

Usage: check_dashboard.py DASHBOARD_URL MASTER_KEY SCREENSHOT_DIR
"""

import json
import pathlib
import sys

import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait


def main():
    url, master_key, shots = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    shots.mkdir(parents=True, exist_ok=True)
    driver = chromium.start(1280, 1000)
    wait = WebDriverWait(driver, 30)
    seen = {}

    def css(selector):
        return driver.find_element(By.CSS_SELECTOR, selector)

    def text(selector):
        return css(selector).text

    def shoot(name):
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, min(max(int(height), 1000), 8000))
        driver.save_screenshot(str(shots / name))
        driver.set_window_size(1280, 1000)

    def count_after(change):
        """The composer's recipient count, once the count asked for after change() has been answered
        (the page numbers each count it asks for, and shows only the newest answer)."""
        label = "document.querySelector('#recipient-count').dataset"
        before = int(driver.execute_script(f"return {label}.asked || 0"))
        change()
        wait.until(lambda d: int(d.execute_script(f"return {label}.asked || 0")) > before
                   and d.execute_script(f"return {label}.pending") is None
                   and d.execute_script(f"return {label}.answered") == d.execute_script(f"return {label}.asked"))
        return int(css("#recipient-count").get_attribute("data-count"))

    try:
        driver.get(url)
        wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")
        seen["title"] = driver.title
        seen["keyFieldType"] = css("#master-key").get_attribute("type")
        css("#master-key").send_keys("not-the-key", Keys.ENTER)
        wait.until(lambda d: text("#login-error"))
        seen["wrongKey"] = text("#login-error")
        css("#master-key").clear()
        css("#master-key").send_keys(master_key, Keys.ENTER)
        wait.until(lambda d: text("#installation-count"))
        seen["installationCount"] = text("#installation-count")
        seen["urlAfterLogin"] = driver.current_url
        shoot("dashboard-installations.png")
        css("#installation-filters select[name=deviceType]").send_keys("android")
        css("#installation-filters button").click()
        wait.until(lambda d: text("#installation-count") != seen["installationCount"])
        seen["androidCount"] = text("#installation-count")

        # The composer: the audience's count follows the choice.
        css("button[data-tab=compose]").click()
        wait.until(lambda d: css("#recipient-count").get_attribute("data-answered"))
        seen["everyoneCount"] = int(css("#recipient-count").get_attribute("data-count"))
        seen["segmentCount"] = count_after(lambda: css("input[name=audience][value=segment]").click())
        seen["segmentWithAndroidCount"] = count_after(lambda: css("input[name=platform][value=android]").click())
        count_after(lambda: css("input[name=audience][value=channels]").click())
        seen["channelsCount"] = count_after(lambda: css("#audience-channels").send_keys("news"))

        # Text that looks like JSON is warned about; JSON that is not valid cannot be sent.
        css("#message").send_keys('{"aps": {"alert": "hi"}}')
        wait.until(lambda d: text("#message-warning"))
        seen["jsonLookingTextWarning"] = text("#message-warning")
        css("input[name=messageType][value=json]").click()
        css("#message").clear()
        css("#message").send_keys("{bad")
        wait.until(lambda d: text("#send-error"))
        seen["invalidJSON"] = {"error": text("#send-error"), "sendDisabled": not css("#send").is_enabled()}

        # Everyone, in text: the confirmation comes first; cancelled, nothing is sent.
        css("input[name=messageType][value=text]").click()
        css("#message").clear()
        css("#message").send_keys("Hello, everyone")
        count_after(lambda: css("input[name=audience][value=everyone]").click())
        css("#send").click()
        wait.until(lambda d: css("#confirm-everyone").get_attribute("open") is not None)
        seen["confirmation"] = text("#confirm-everyone")
        seen["focusInDialog"] = driver.execute_script("return document.activeElement.id")
        shoot("dashboard-confirm-everyone.png")
        css("#confirm-cancel").click()
        wait.until(lambda d: css("#confirm-everyone").get_attribute("open") is None)
        seen["sentAfterCancel"] = text("#send-result")  # and, at the end, one push in Past pushes
        css("#send").click()
        wait.until(lambda d: css("#confirm-everyone").get_attribute("open") is not None)
        css("#confirm-send").click()
        wait.until(lambda d: css("#send-result").get_attribute("data-push-id"))
        seen["pushId"] = css("#send-result").get_attribute("data-push-id")
        shoot("dashboard-compose.png")

        # The push's details: every device's APNs answer, once it has gone out.
        css("#send-result button").click()
        wait.until(lambda d: text("#detail-status") == "SENT")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#outcome-table tbody tr")) == seen["everyoneCount"])
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#push-table tbody tr .status")
                   and text("#push-table tbody tr .status") == "SENT")
        seen["detailStatus"] = text("#detail-status")
        seen["focusOnDetails"] = driver.execute_script("return document.activeElement.closest('#push-details') !== null")
        seen["reasons"] = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#detail-reasons li")]
        seen["outcomes"] = [[td.text for td in row.find_elements(By.TAG_NAME, "td")]
                            for row in driver.find_elements(By.CSS_SELECTOR, "#outcome-table tbody tr")]
        seen["pastPushes"] = [[td.text for td in row.find_elements(By.TAG_NAME, "td")]
                              for row in driver.find_elements(By.CSS_SELECTOR, "#push-table tbody tr")]
        shoot("dashboard-push-details.png")

        css("button[data-tab=feed]").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#feed-table tbody tr")) > 0)
        seen["feedRows"] = len(driver.find_elements(By.CSS_SELECTOR, "#feed-table tbody tr"))
        seen["keyInLocalStorage"] = driver.execute_script("return Object.keys(localStorage).length + document.cookie.length")
        seen["pageError"] = text("#page-error")
        shoot("dashboard-feed.png")
        # The wrong key's 403 is the one failed request a person should have caused.
        seen["console"] = [{"level": e["level"], "message": e["message"]} for e in driver.get_log("browser")
                           if not ("/parse/serverInfo" in e["message"] and "403" in e["message"])]
    finally:
        driver.quit()
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
