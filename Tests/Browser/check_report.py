"""Opens a harness report.html in headless Chromium (through chromedriver) and prints what a person
would see, as JSON, for a Swift test to check: the console's messages, the page's numbers, what the
table filter does when a component is unchecked, and a screenshot of the whole page.

Usage: check_report.py REPORT_HTML SCREENSHOT_PNG [SOURCE_TO_HIDE]
"""

import json
import pathlib
import sys

import chromium
from selenium.webdriver.common.by import By


def main():
    report = pathlib.Path(sys.argv[1]).resolve()
    screenshot = pathlib.Path(sys.argv[2]).resolve()
    hidden_source = sys.argv[3] if len(sys.argv) > 3 else "app"

    driver = chromium.start(1280, 900)
    try:
        driver.get(report.as_uri())
        driver.find_element(By.CSS_SELECTOR, "table.events")  # the page has loaded and rendered

        def count(selector):
            return len(driver.find_elements(By.CSS_SELECTOR, selector))

        sequence = driver.find_element(By.CSS_SELECTOR, "svg.sequence")
        plots = driver.find_elements(By.CSS_SELECTOR, "svg.plot")
        seen = {
            "title": driver.title,
            "outcome": driver.find_element(By.CSS_SELECTOR, "header .outcome").text,
            "chainLinks": count("table.chain tbody tr"),
            "chainMissing": count("table.chain tbody tr.missing"),
            "sequenceMessages": count("svg.sequence g.message"),
            "sequenceMessagesDeclared": int(sequence.get_attribute("data-messages")),
            "sequenceBadges": count("svg.sequence g.badge"),
            "sequenceMissing": count("svg.sequence g.missing"),
            "sequenceHeight": sequence.size["height"],
            "plotSeries": count("svg.plot polyline.series"),
            "plotRateLines": count("svg.plot line.rate"),
            "plotLegend": plots[0].text if plots else "",
            "eventRows": count("table.events tbody tr"),
            "explanation": "\n".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, "pre.explanation")),
        }
        rows_of_hidden = count(f"table.events tbody tr[data-source='{hidden_source}']")
        box = driver.find_element(By.CSS_SELECTOR, f".filters input[data-source='{hidden_source}']")
        box.click()
        seen["filter"] = {
            "source": hidden_source,
            "rowsOfSource": rows_of_hidden,
            "visibleAfterUnchecking": sum(1 for row in driver.find_elements(By.CSS_SELECTOR, "table.events tbody tr")
                                          if row.is_displayed()),
            "counterAfterUnchecking": driver.find_element(By.ID, "shown-count").text,
        }
        box.click()
        # The whole page, however long: make the window as tall as the document first.
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, min(max(int(height), 900), 16000))
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(screenshot))
        seen["screenshotBytes"] = screenshot.stat().st_size
        seen["console"] = [{"level": entry["level"], "message": entry["message"]} for entry in driver.get_log("browser")]
    finally:
        driver.quit()
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
