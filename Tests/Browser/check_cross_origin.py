"""Calls FakeParse from a page on another origin in headless Chromium, as a web app written against
Parse Server would: the browser sends its CORS preflight, then the call, and lets the page read the
answer only if FakeParse allowed it. Prints what the page saw, as JSON.

Usage: check_cross_origin.py PAGE_URL PARSE_URL APPLICATION_ID MASTER_KEY [CLIENT_KEY]

PAGE_URL is any page on an origin other than PARSE_URL's; the page's script does the rest. A client key,
when the server wants one, goes in X-Parse-REST-API-Key (X-Parse-Client-Key is not among the headers
Parse Server lets pages send).
"""

import json
import sys

import chromium

SCRIPT = """
const [parse, applicationId, masterKey, clientKey, done] = arguments;
async function call(method, path, headers, body) {
  try {
    const answer = await fetch(parse + path, {method, headers, body: body && JSON.stringify(body)});
    return {status: answer.status, body: await answer.json(),
            pushStatusId: answer.headers.get('X-Parse-Push-Status-Id')};
  } catch (error) {
    return {error: String(error)};
  }
}
const keys = {'X-Parse-Application-Id': applicationId, 'Content-Type': 'application/json'};
if (clientKey) keys['X-Parse-REST-API-Key'] = clientKey;
(async () => {
  const saved = await call('POST', '/installations', keys,
                           {deviceType: 'ios', installationId: 'web-1', deviceToken: 'ab'.repeat(32)});
  const pushed = await call('POST', '/push', {...keys, 'X-Parse-Master-Key': masterKey},
                            {where: {installationId: 'web-1'}, data: {alert: 'from a web page'}});
  const refused = await call('GET', '/installations', keys);
  done({origin: location.origin, saved, pushed, refused});
})();
"""


def main():
    page, parse, application_id, master_key = sys.argv[1:5]
    client_key = sys.argv[5] if len(sys.argv) > 5 else ""
    driver = chromium.start(800, 600)
    try:
        driver.set_script_timeout(60)
        driver.get(page)
        print(json.dumps(driver.execute_async_script(SCRIPT, parse, application_id, master_key, client_key)))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
