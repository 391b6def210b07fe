"""Headless Chromium through chromedriver, as the browser checks start it: the browser's console kept
for the check to read."""

import shutil
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def find(*names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    sys.exit(f"{sys.argv[0]}: none of {', '.join(names)} is installed (apt-get install chromium chromium-driver)")


def start(width, height):
    options = webdriver.ChromeOptions()
    options.binary_location = find("chromium", "chromium-browser", "google-chrome")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(find("chromedriver")), options=options)
