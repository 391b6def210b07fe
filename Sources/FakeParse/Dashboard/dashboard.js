// FakeParse's dashboard: Parse Dashboard's push pages, against FakeParse's REST API with the master key,
// plus what its users asked for: every device's APNs answer, a confirmation before sending to everyone,
// a warning when text looks like JSON, and a live feed. No build step, nothing fetched from elsewhere.
"use strict";

const state = {
  applicationId: null, masterKey: sessionStorage.getItem("fakeparse.masterKey"), timers: {},
  countGeneration: 0, detailsGeneration: 0, feedGeneration: 0, counting: null,
};
const $ = (selector) => document.querySelector(selector);
const $$ = (selector) => Array.from(document.querySelectorAll(selector));

function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name === "class") node.className = value; else if (name.startsWith("on")) node.addEventListener(name.slice(2), value); else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(child == null ? "" : String(child)));
  return node;
}

async function api(method, path, body, parameters) {
  let url = "/parse" + path;
  if (parameters) url += "?" + new URLSearchParams(Object.entries(parameters).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  const response = await fetch(url, {
    method,
    headers: { "X-Parse-Application-Id": state.applicationId, "X-Parse-Master-Key": state.masterKey || "", "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(json.error ? (json.code ? json.code + " " : "") + json.error : "HTTP " + response.status);
    error.status = response.status;
    throw error;
  }
  return { json, headers: response.headers };
}

// Shows what went wrong in the page instead of leaving a promise rejected.
function reporting(work) {
  return async (...args) => {
    try {
      $("#page-error").textContent = "";
      await work(...args);
    } catch (error) {
      $("#page-error").textContent = "FakeParse did not answer as expected: " + error.message;
    }
  };
}

// --- Keys and tabs ---------------------------------------------------------------------------------

async function open() {
  try {
    await api("GET", "/serverInfo");
  } catch (error) {
    if (error.status === 403) {
      sessionStorage.removeItem("fakeparse.masterKey");
      state.masterKey = null;
      $("#login-error").textContent = "That is not the master key.";
    } else {
      $("#login-error").textContent = "FakeParse did not answer: " + error.message;
    }
    $("#login").hidden = false;
    return;
  }
  sessionStorage.setItem("fakeparse.masterKey", state.masterKey);
  $("#login").hidden = true;
  $("#tabs").hidden = false;
  show("installations");
}

function forget() {
  sessionStorage.removeItem("fakeparse.masterKey");
  location.reload();
}

function show(tab, { focus = true } = {}) {
  for (const button of $$("#tabs button[data-tab]")) {
    if (button.dataset.tab === tab) button.setAttribute("aria-current", "page"); else button.removeAttribute("aria-current");
  }
  for (const name of ["installations", "compose", "pushes", "feed"]) $("#" + name).hidden = name !== tab;
  // What the other sections were following stops.
  clearTimeout(state.timers.feed);
  clearTimeout(state.timers.details);
  state.feedGeneration += 1;
  state.detailsGeneration += 1;
  if (focus) $("#" + tab + " h2").focus();
  if (tab === "installations") reporting(loadInstallations)();
  if (tab === "compose") updateRecipientCount();
  if (tab === "pushes") { $("#push-details").hidden = true; reporting(loadPushes)(); }
  if (tab === "feed") followFeed(state.feedGeneration);
}

// --- Installations ---------------------------------------------------------------------------------

async function loadInstallations() {
  const form = $("#installation-filters");
  const where = {};
  if (form.channel.value.trim()) where.channels = form.channel.value.trim();
  if (form.deviceType.value) where.deviceType = form.deviceType.value;
  if (form.appIdentifier.value.trim()) where.appIdentifier = form.appIdentifier.value.trim();
  const { json } = await api("GET", "/classes/_Installation", undefined, { where, order: "-updatedAt", limit: "100", count: "1" });
  $("#installation-count").textContent = (json.count === 1 ? "1 installation" : json.count + " installations")
    + (json.count > json.results.length ? " (the " + json.results.length + " updated last are shown)" : "");
  const body = $("#installation-table tbody");
  body.replaceChildren(...json.results.map((row) => element("tr", {},
    element("td", {}, row.objectId), element("td", {}, row.deviceType), element("td", { class: "token" }, row.deviceToken || "—"),
    element("td", {}, (row.channels || []).filter((c) => c !== "").join(", ")), element("td", {}, row.appIdentifier || ""),
    element("td", {}, row.badge ?? ""), element("td", {}, row.updatedAt))));
}

// --- The composer ----------------------------------------------------------------------------------

function audience() {
  const kind = $("input[name=audience]:checked").value;
  if (kind === "everyone") return { kind, where: {} };
  if (kind === "channels") {
    const channels = $("#audience-channels").value.split(",").map((c) => c.trim()).filter((c) => c);
    return { kind, channels, where: { channels: { $in: channels } } };
  }
  const conditions = [{ deviceType: { $in: $$("input[name=platform]:checked").map((box) => box.value) } }];
  for (const row of $$("#conditions .condition")) {
    const field = row.querySelector(".field").value.trim();
    const operator = row.querySelector(".operator").value;
    const text = row.querySelector(".value").value;
    if (!field) continue;
    // A value is a string for the installation's string columns; elsewhere a number or true/false is read as one.
    let value = text;
    if (!stringColumns.has(field)) { try { value = JSON.parse(text); } catch (_) { /* a plain string */ } }
    const test = operator === "equals" ? value : operator === "exists" ? { $exists: true } : operator === "missing" ? { $exists: false } : { [operator]: value };
    conditions.push({ [field]: test });
  }
  // Each condition its own clause, so that two on one field (a range) both hold.
  return { kind, where: conditions.length === 1 ? conditions[0] : { $and: conditions } };
}

const stringColumns = new Set(["installationId", "deviceToken", "deviceType", "pushType", "GCMSenderId", "timeZone",
  "localeIdentifier", "appVersion", "appName", "appIdentifier", "parseVersion"]);

function addCondition() {
  const row = element("div", { class: "condition" },
    element("label", {}, "Field ", element("input", { class: "field", placeholder: "appVersion" })),
    element("label", {}, " ", element("select", { class: "operator", "aria-label": "operator" },
      ...[["equals", "equals"], ["$ne", "is not"], ["$gt", "greater than"], ["$lt", "less than"], ["exists", "exists"], ["missing", "does not exist"]]
        .map(([value, label]) => element("option", { value }, label)))),
    element("label", {}, " Value ", element("input", { class: "value" })),
    element("button", { type: "button", onclick: () => { row.remove(); updateRecipientCount(); } }, "Remove"));
  $("#conditions").append(row);
}

// "This notification will be sent to N devices": the audience's installations that have a device token,
// which is who FakeParse sends to (Parse Dashboard counts those without one too). Resolves to the count
// of the newest request: one overtaken by a newer count (the audience or the message changed meanwhile)
// answers with the newer one's count, so the confirmation never shows a count that was not made.
function updateRecipientCount() {
  const counting = countRecipients();
  state.counting = counting;
  return counting;
}

async function countRecipients() {
  const generation = ++state.countGeneration;
  const label = $("#recipient-count");
  label.dataset.asked = String(generation);
  delete label.dataset.pending;
  const { where } = audience();
  try {
    const { json } = await api("GET", "/classes/_Installation", undefined, { where: { $and: [where, { deviceToken: { $gt: "" } }] }, count: "1", limit: "0" });
    if (generation !== state.countGeneration) return state.counting;
    state.recipients = json.count;
    label.textContent = "This notification will be sent to " + json.count + (json.count === 1 ? " device." : " devices.");
    label.dataset.count = String(json.count);
    label.dataset.answered = String(generation);
    return json.count;
  } catch (error) {
    if (generation !== state.countGeneration) return state.counting;
    state.recipients = null;
    label.textContent = "The audience cannot be counted: " + error.message;
    label.dataset.count = "";
  }
}

function message() {
  const type = $("input[name=messageType]:checked").value;
  const text = $("#message").value;
  const warning = $("#message-warning");
  warning.textContent = "";
  if (type === "json") {
    let data;
    try { data = JSON.parse(text); } catch (_) { return { error: "Your message is not valid JSON." }; }
    if (data === null || typeof data !== "object" || Array.isArray(data)) return { error: "Your message is not valid JSON: it must be an object, the push's data." };
    return { data };
  }
  if (!text.trim()) return { error: "Write a message." };
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try { JSON.parse(trimmed); warning.textContent = "This looks like JSON. It will be sent as the alert's text; choose JSON to send it as the push's data."; } catch (_) { /* plain text */ }
  }
  return { data: { alert: text } };
}

function pushBody() {
  const { kind, channels, where } = audience();
  const { data, error } = message();
  if (error) return { error };
  if (kind === "channels" && channels.length === 0) return { error: "Name at least one channel." };
  if (kind === "segment" && $$("input[name=platform]:checked").length === 0) return { error: "Choose at least one platform." };
  if ($("#increment-badge").checked) data.badge = "Increment";
  const body = kind === "channels" ? { channels, data } : { where, data };
  if ($("input[name=when]:checked").value === "later") {
    if (!$("#push-time").value) return { error: "Choose a delivery time." };
    body.push_time = new Date($("#push-time").value).toISOString();
  }
  const expiry = $("input[name=expiry]:checked").value;
  if (expiry === "interval") {
    const hours = Number($("#expiry-hours").value);
    if (!(hours > 0 && hours <= 8760)) return { error: "Expire after 1 to 8,760 hours." };
    body.expiration_interval = Math.round(hours * 3600);
  }
  if (expiry === "time") {
    if (!$("#expiry-time").value) return { error: "Choose an expiry time." };
    body.expiration_time = new Date($("#expiry-time").value).toISOString();
  }
  return { body, kind };
}

function refreshComposer() {
  const { error } = pushBody();
  $("#send-error").textContent = error && $("#message").value ? error : "";
  $("#send").disabled = Boolean(error);
  for (const detail of $$(".audience-detail")) detail.hidden = detail.dataset.audience !== $("input[name=audience]:checked").value;
}

async function send(body) {
  $("#send-result").textContent = "";
  $("#send-error").textContent = "";
  $("#send").disabled = true;  // one click, one push
  try {
    const { headers } = await api("POST", "/push", body);
    const id = headers.get("X-Parse-Push-Status-Id");
    const link = element("button", { type: "button", class: "link", onclick: () => { show("pushes", { focus: false }); reporting(showDetails)(id); } }, "See every device's outcome");
    $("#send-result").replaceChildren("Sent: push " + id + ". ", link);
    $("#send-result").dataset.pushId = id;
  } catch (error) {
    $("#send-error").textContent = "Parse refused the push: " + error.message;
  } finally {
    refreshComposer();
  }
}

async function submitPush(event) {
  event.preventDefault();
  const { body, kind, error } = pushBody();
  if (error) { $("#send-error").textContent = error; return; }
  if (kind !== "everyone") { send(body); return; }
  const dialog = $("#confirm-everyone");
  // Counted now, not whenever the count last came back.
  const count = await updateRecipientCount();
  $("#confirm-text").textContent = "This goes to every installation with a device token: " + (count ?? "?") + " devices.";
  dialog.returnValue = "";
  dialog.onclose = () => { if (dialog.returnValue === "send") send(body); };
  dialog.showModal();
}

// --- Past pushes and details -----------------------------------------------------------------------

const statusLabels = { succeeded: "SENT", failed: "FAILED", pending: "SENDING", running: "SENDING", scheduled: "SCHEDULED" };

function target(queryText) {
  let query = {};
  try { query = JSON.parse(queryText || "{}"); } catch (_) { return queryText; }
  const keys = Object.keys(query);
  if (keys.length === 0) return "Everyone";
  const channels = query.channels;
  if (keys.length === 1 && (typeof channels === "string" || Array.isArray(channels?.$in))) {
    return "Channels: " + (typeof channels === "string" ? channels : channels.$in.join(", "));
  }
  return "Segment: " + JSON.stringify(query);
}

function pushName(payloadText) {
  try {
    const payload = JSON.parse(payloadText || "{}");
    const alert = payload.alert ?? payload.aps?.alert;
    if (typeof alert === "string") return alert;
    if (alert && (alert.title || alert.body)) return [alert.title, alert.body].filter((x) => x).join(": ");
  } catch (_) { /* shown as it is */ }
  return payloadText;
}

async function loadPushes() {
  const { json } = await api("GET", "/classes/_PushStatus", undefined, { order: "-createdAt", limit: "50" });
  $("#push-table tbody").replaceChildren(...json.results.map((row) => element("tr", { "data-id": row.objectId },
    element("td", {}, "api"), element("td", {}, target(row.query)),
    element("td", {}, row.numSent ?? "N/A"), element("td", { class: row.numFailed ? "bad" : "" }, row.numFailed ?? 0),
    element("td", {}, element("button", { type: "button", class: "link", onclick: () => reporting(showDetails)(row.objectId) }, pushName(row.payload))),
    element("td", {}, row.pushTime), element("td", {}, element("span", { class: "status " + row.status }, statusLabels[row.status] || row.status)))));
}

const focusedDetails = new Set();

async function showDetails(id) {
  clearTimeout(state.timers.details);
  const generation = ++state.detailsGeneration;
  // The status first: the outcomes read after it hold at least every device it counts.
  const { json: status } = await api("GET", "/classes/_PushStatus/" + encodeURIComponent(id));
  const { json: outcomes } = await api("GET", "/classes/_PushOutcome", undefined,
    { where: { pushStatusId: id }, order: "deviceToken", limit: "10000", count: "1" });
  await loadPushes();
  if (generation !== state.detailsGeneration) return;  // another push was opened, or the section left
  const article = $("#push-details");
  article.hidden = false;
  article.dataset.id = id;
  $("#detail-id").textContent = id;
  $("#detail-status").textContent = statusLabels[status.status] || status.status;
  $("#detail-status").className = "status " + status.status;
  const facts = [["Message", pushName(status.payload)], ["Payload", status.payload], ["Target", target(status.query)], ["Time", status.pushTime],
    ["Expires", status.expiry ? new Date(status.expiry).toISOString() : "never"], ["Sent", status.numSent ?? 0], ["Failed", status.numFailed ?? 0],
    ["Sent per type", JSON.stringify(status.sentPerType || {})], ["Failed per type", JSON.stringify(status.failedPerType || {})]];
  if (status.errorMessage) facts.push(["Error", status.errorMessage.message || JSON.stringify(status.errorMessage)]);
  $("#detail-facts").replaceChildren(...facts.flatMap(([term, value]) => [element("dt", {}, term), element("dd", {}, value)]));
  const reasons = new Map();
  for (const row of outcomes.results.filter((r) => !r.transmitted)) {
    const reason = row.reason ? row.reason + " (" + row.status + ")" : row.error || "no answer";
    reasons.set(reason, (reasons.get(reason) || 0) + 1);
  }
  $("#detail-reasons").replaceChildren(...(reasons.size ? [...reasons].map(([reason, count]) => element("li", { class: "bad" }, count + " × " + reason))
    : [element("li", {}, outcomes.results.length ? "APNs accepted every device." : "No device was sent to.")]));
  $("#outcome-note").textContent = outcomes.count > outcomes.results.length
    ? "The first " + outcomes.results.length + " of " + outcomes.count + " devices, by token." : "";
  $("#outcome-table tbody").replaceChildren(...outcomes.results.map((row) => element("tr", { class: row.transmitted ? "" : "bad" },
    element("td", { class: "token" }, row.deviceToken), element("td", {}, row.deviceType), element("td", {}, row.status ?? "—"),
    element("td", { class: "reason" }, row.reason || row.error || ""), element("td", {}, row.apnsId || ""), element("td", {}, row.createdAt))));
  if (!focusedDetails.has(id)) { focusedDetails.add(id); $("#push-details h3").focus(); }
  if (["pending", "running", "scheduled"].includes(status.status)) {
    state.timers.details = setTimeout(reporting(() => showDetails(id)), 1000);
  }
}

// --- The live feed ---------------------------------------------------------------------------------

// One request at a time: the next is asked for a second after the last answer, until the section is left.
async function followFeed(generation) {
  try {
    await loadFeed(generation);
    $("#page-error").textContent = "";
  } catch (error) {
    $("#page-error").textContent = "FakeParse did not answer as expected: " + error.message;
  }
  if (generation === state.feedGeneration) state.timers.feed = setTimeout(() => followFeed(generation), 1000);
}

async function loadFeed(generation) {
  const { json } = await api("GET", "/classes/_PushOutcome", undefined, { order: "-createdAt", limit: "50" });
  if (generation !== state.feedGeneration) return;
  $("#feed-table tbody").replaceChildren(...json.results.map((row) => element("tr", { class: row.transmitted ? "" : "bad" },
    element("td", {}, row.createdAt), element("td", {}, row.pushStatusId), element("td", { class: "token" }, row.deviceToken),
    element("td", {}, row.status ?? "—"), element("td", { class: "reason" }, row.reason || row.error || "accepted"))));
}

// --- Start -----------------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", async () => {
  // Every form is handled before anything is fetched: a form is never submitted the browser's way.
  $("#login-form").addEventListener("submit", (event) => { event.preventDefault(); state.masterKey = $("#master-key").value; open(); });
  $("#installation-filters").addEventListener("submit", (event) => { event.preventDefault(); reporting(loadInstallations)(); });
  $("#forget-key").addEventListener("click", forget);
  for (const button of $$("#tabs button[data-tab]")) button.addEventListener("click", () => show(button.dataset.tab));
  const form = $("#push-form");
  form.addEventListener("input", () => {
    refreshComposer();
    clearTimeout(state.timers.count);
    $("#recipient-count").dataset.pending = "true";  // a count is coming once the typing pauses
    state.timers.count = setTimeout(updateRecipientCount, 150);
  });
  form.addEventListener("change", () => { refreshComposer(); updateRecipientCount(); });
  form.addEventListener("submit", submitPush);
  $("#add-condition").addEventListener("click", addCondition);
  $("#confirm-cancel").addEventListener("click", () => $("#confirm-everyone").close("cancel"));
  $("#confirm-send").addEventListener("click", () => $("#confirm-everyone").close("send"));
  refreshComposer();
  try {
    state.applicationId = (await (await fetch("/dashboard/config.json")).json()).applicationId;
  } catch (error) {
    $("#login-error").textContent = "FakeParse did not answer: " + error.message;
    return;
  }
  document.body.dataset.ready = "true";
  if (state.masterKey) open();
});
