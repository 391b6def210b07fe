// FakeParse's dashboard: Parse Dashboard's push pages, against FakeParse's REST API with the master key,
// plus what its users asked for: every device's APNs answer, a confirmation before sending to everyone,
// a warning when text looks like JSON, and a live feed. No build step, nothing fetched from elsewhere.
"use strict";

const state = { applicationId: null, masterKey: sessionStorage.getItem("fakeparse.masterKey"), timers: {}, countGeneration: 0 };
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
  if (!response.ok) throw new Error(json.error ? (json.code ? json.code + " " : "") + json.error : "HTTP " + response.status);
  return { json, headers: response.headers };
}

// --- Keys and tabs ---------------------------------------------------------------------------------

async function open() {
  try {
    await api("GET", "/serverInfo");
  } catch (error) {
    sessionStorage.removeItem("fakeparse.masterKey");
    state.masterKey = null;
    $("#login-error").textContent = error.message.includes("unauthorized") ? "That is not the master key." : error.message;
    return;
  }
  sessionStorage.setItem("fakeparse.masterKey", state.masterKey);
  $("#login").hidden = true;
  $("#tabs").hidden = false;
  show("installations");
}

function show(tab) {
  for (const button of $$("#tabs button")) button.setAttribute("aria-selected", String(button.dataset.tab === tab));
  for (const name of ["installations", "compose", "pushes", "feed"]) $("#" + name).hidden = name !== tab;
  clearInterval(state.timers.feed);
  if (tab === "installations") loadInstallations();
  if (tab === "compose") updateRecipientCount();
  if (tab === "pushes") loadPushes();
  if (tab === "feed") { loadFeed(); state.timers.feed = setInterval(loadFeed, 1000); }
}

// --- Installations ---------------------------------------------------------------------------------

async function loadInstallations() {
  const form = $("#installation-filters");
  const where = {};
  if (form.channel.value.trim()) where.channels = form.channel.value.trim();
  if (form.deviceType.value) where.deviceType = form.deviceType.value;
  if (form.appIdentifier.value.trim()) where.appIdentifier = form.appIdentifier.value.trim();
  const { json } = await api("GET", "/classes/_Installation", undefined, { where, order: "-updatedAt", limit: "100", count: "1" });
  $("#installation-count").textContent = json.count === 1 ? "1 installation" : json.count + " installations";
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
  const where = { deviceType: { $in: $$("input[name=platform]:checked").map((box) => box.value) } };
  for (const row of $$("#conditions .condition")) {
    const field = row.querySelector(".field").value.trim();
    const operator = row.querySelector(".operator").value;
    const text = row.querySelector(".value").value;
    if (!field) continue;
    let value = text;
    try { value = JSON.parse(text); } catch (_) { /* a plain string */ }
    where[field] = operator === "equals" ? value : operator === "exists" ? { $exists: true } : operator === "missing" ? { $exists: false } : { [operator]: value };
  }
  return { kind, where };
}

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
// which is who FakeParse sends to (Parse Dashboard counts those without one too).
async function updateRecipientCount() {
  const generation = ++state.countGeneration;
  const label = $("#recipient-count");
  label.dataset.asked = String(generation);
  delete label.dataset.pending;
  const { where } = audience();
  try {
    const { json } = await api("GET", "/classes/_Installation", undefined, { where: { $and: [where, { deviceToken: { $gt: "" } }] }, count: "1", limit: "0" });
    if (generation !== state.countGeneration) return;
    state.recipients = json.count;
    label.textContent = "This notification will be sent to " + json.count + (json.count === 1 ? " device." : " devices.");
    label.dataset.count = String(json.count);
    label.dataset.answered = String(generation);
  } catch (error) {
    if (generation === state.countGeneration) { label.textContent = "The audience cannot be counted: " + error.message; label.dataset.count = ""; }
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
  if (kind === "segment" && where.deviceType.$in.length === 0) return { error: "Choose at least one platform." };
  if ($("#increment-badge").checked) data.badge = "Increment";
  const body = kind === "channels" ? { channels, data } : { where, data };
  if ($("input[name=when]:checked").value === "later") {
    if (!$("#push-time").value) return { error: "Choose a delivery time." };
    body.push_time = new Date($("#push-time").value).toISOString();
  }
  const expiry = $("input[name=expiry]:checked").value;
  if (expiry === "interval") body.expiration_interval = Math.round(Number($("#expiry-hours").value) * 3600);
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
  try {
    const { headers } = await api("POST", "/push", body);
    const id = headers.get("X-Parse-Push-Status-Id");
    const link = element("button", { type: "button", class: "link", onclick: () => { show("pushes"); showDetails(id); } }, "See every device's outcome");
    $("#send-result").replaceChildren("Sent: push " + id + ". ", link);
    $("#send-result").dataset.pushId = id;
  } catch (error) {
    $("#send-error").textContent = "Parse refused the push: " + error.message;
  }
}

function submitPush(event) {
  event.preventDefault();
  const { body, kind, error } = pushBody();
  if (error) { $("#send-error").textContent = error; return; }
  if (kind !== "everyone") { send(body); return; }
  const dialog = $("#confirm-everyone");
  $("#confirm-text").textContent = "This goes to every installation with a device token: " + (state.recipients ?? "?") + " devices.";
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
  if (keys.length === 1 && keys[0] === "channels") {
    const channels = query.channels.$in || [query.channels];
    return "Channels: " + channels.join(", ");
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
    element("td", {}, row.source === "webui" ? "campaign" : "api"), element("td", {}, target(row.query)),
    element("td", {}, row.numSent ?? "N/A"), element("td", { class: row.numFailed ? "bad" : "" }, row.numFailed ?? 0),
    element("td", {}, element("button", { type: "button", class: "link", onclick: () => showDetails(row.objectId) }, pushName(row.payload))),
    element("td", {}, row.pushTime), element("td", {}, element("span", { class: "status " + row.status }, statusLabels[row.status] || row.status)))));
}

async function showDetails(id) {
  clearTimeout(state.timers.details);
  const [{ json: status }, { json: outcomes }] = await Promise.all([
    api("GET", "/classes/_PushStatus/" + encodeURIComponent(id)),
    api("GET", "/classes/_PushOutcome", undefined, { where: { pushStatusId: id }, order: "deviceToken", limit: "10000" }),
  ]);
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
  $("#outcome-table tbody").replaceChildren(...outcomes.results.map((row) => element("tr", { class: row.transmitted ? "" : "bad" },
    element("td", { class: "token" }, row.deviceToken), element("td", {}, row.deviceType), element("td", {}, row.status ?? "—"),
    element("td", { class: "reason" }, row.reason || row.error || ""), element("td", {}, row.apnsId || ""), element("td", {}, row.createdAt))));
  if (["pending", "running", "scheduled"].includes(status.status)) state.timers.details = setTimeout(() => showDetails(id), 1000);
}

// --- The live feed ---------------------------------------------------------------------------------

async function loadFeed() {
  const { json } = await api("GET", "/classes/_PushOutcome", undefined, { order: "-createdAt", limit: "50" });
  $("#feed-table tbody").replaceChildren(...json.results.map((row) => element("tr", { class: row.transmitted ? "" : "bad" },
    element("td", {}, row.createdAt), element("td", {}, row.pushStatusId), element("td", { class: "token" }, row.deviceToken),
    element("td", {}, row.status ?? "—"), element("td", { class: "reason" }, row.reason || row.error || "accepted"))));
}

// --- Start -----------------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", async () => {
  state.applicationId = (await (await fetch("/dashboard/config.json")).json()).applicationId;
  $("#login-form").addEventListener("submit", (event) => { event.preventDefault(); state.masterKey = $("#master-key").value; open(); });
  $("#installation-filters").addEventListener("submit", (event) => { event.preventDefault(); loadInstallations(); });
  for (const button of $$("#tabs button")) button.addEventListener("click", () => show(button.dataset.tab));
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
  document.body.dataset.ready = "true";
  if (state.masterKey) open();
});
