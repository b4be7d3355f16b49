// voice-hitl operator console: the live desk over the JSON-RPC feed (no build step).
//
// Open requests are kept sorted by time left (soonest deadline first); settled ones fold into
// the "Settled" section. Filters, search and counts are applied per card, so one feed event
// costs one card's work even with hundreds open. `window.voiceHitlDesk.stats` records how long
// the snapshot and each update took (bench/bench_console.py reads it).
"use strict";

const SETTLED_KEPT = 100;
const state = {
  token: null, socket: null, signedOut: false, me: "", nextId: 1, calls: new Map(),
  open: new Map(),      // id -> {request, card, key, hay}
  order: [],            // open ids sorted by sortKey
  settledCount: 0, shown: 0, audio: null,
};
const stats = { snapshotMs: null, snapshotAt: null, snapshotSize: 0, updateMs: [], frameMs: [],
  tickMs: [], chimes: 0, notified: 0 };
window.voiceHitlDesk = { stats };
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function tokenFromPage() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const token = hash.get("token");
  if (token) {
    sessionStorage.setItem("voice-hitl-token", token);
    history.replaceState(null, "", location.pathname);
  }
  return sessionStorage.getItem("voice-hitl-token");
}

function setStatus(text, online) {
  const status = $("#status");
  status.textContent = text;
  status.className = "status " + (online ? "online" : "offline");
}

function announce(text) {
  $("#announce").textContent = text;
}

function call(method, params) {
  const id = state.nextId++;
  return new Promise((resolve) => {
    state.calls.set(id, resolve);
    state.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  });
}

function questionOf(request) {
  const spec = request.spec || {};
  const args = request.arguments || {};
  return spec.question || args.question || args.action || request.tool;
}

// ---- ordering -------------------------------------------------------------------------------

function sortKey(request) {
  const deadline = request.deadline ? Date.parse(request.deadline) : Infinity;
  return [deadline, Date.parse(request.created_at) || 0, request.id];
}

function before(a, b) {
  for (let i = 0; i < 3; i++) {
    if (a[i] < b[i]) return true;
    if (a[i] > b[i]) return false;
  }
  return false;
}

function insertAt(key) {
  let lo = 0, hi = state.order.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(state.open.get(state.order[mid]).key, key)) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// ---- filters, search and counts -------------------------------------------------------------

function named(request) {
  return [...(request.addressed || []), ...(request.approvers || [])];
}

function haystack(request) {
  const lines = (request.transcript || []).map((line) => line.text || "");
  return [questionOf(request), request.tool, request.room, request.channel, request.actor || "",
    request.id, ...named(request), ...lines].join("\n").toLowerCase();
}

function filters() {
  return {
    room: $("#f-room").value, tool: $("#f-tool").value, actor: $("#f-actor").value,
    mine: $("#f-mine").checked, words: $("#search").value.trim().toLowerCase().split(/\s+/)
      .filter(Boolean),
  };
}

function matches(entry, f) {
  const request = entry.request;
  if (f.room && request.room !== f.room) return false;
  if (f.tool && request.tool !== f.tool) return false;
  if (f.actor && (request.actor || "") !== f.actor) return false;
  if (f.mine && !named(request).includes(state.me)) return false;
  return f.words.every((word) => entry.hay.includes(word));
}

function applyFilters() {
  const f = filters();
  let shown = 0;
  for (const entry of state.open.values()) {
    const visible = matches(entry, f);
    entry.card.hidden = !visible;
    if (visible) shown++;
  }
  state.shown = shown;
  refreshCounts();
}

function ensureOption(select, value, label) {
  if (value === "" || value === null || value === undefined) return;
  for (const option of select.options) {
    if (option.value === value) return;
  }
  const option = el("option", { value }, label || value);
  const after = [...select.options].slice(1).find((o) => o.value.localeCompare(value) > 0);
  select.insertBefore(option, after || null);
}

function noteOptions(request) {
  ensureOption($("#f-room"), request.room);
  ensureOption($("#f-tool"), request.tool);
  ensureOption($("#f-actor"), request.actor || "");
}

function refreshCounts() {
  const open = state.open.size;
  const filtered = state.shown !== open;
  $("#count").textContent = filtered ? `${open} open, ${state.shown} shown` : `${open} open`;
  document.title = open ? `(${open}) voice-hitl console` : "voice-hitl console";
  $("#empty").hidden = open > 0;
  $("#none-shown").hidden = !(open > 0 && state.shown === 0);
  $("#settled-count").textContent = String(state.settledCount);
}

// ---- urgency --------------------------------------------------------------------------------

function urgencyOf(request, now) {
  if (!request.deadline) return ["no deadline", "calm", Infinity];
  const end = Date.parse(request.deadline);
  const left = Math.round((end - now) / 1000);
  if (left <= 0) return ["deadline passed", "over", left];
  const total = (end - (Date.parse(request.created_at) || end)) / 1000;
  const minutes = Math.floor(left / 60);
  const seconds = String(left % 60).padStart(2, "0");
  const level = left <= Math.max(30, total * 0.2) ? "soon" : "calm";
  return [`${minutes}:${seconds} left`, level, left];
}

function tick() {
  const started = performance.now();
  const now = Date.now();
  for (const entry of state.open.values()) {
    const [text, level] = urgencyOf(entry.request, now);
    if (entry.countdown.textContent !== text) entry.countdown.textContent = text;
    if (entry.card.dataset.urgency !== level) entry.card.dataset.urgency = level;
  }
  if (stats.tickMs.length >= 60) stats.tickMs.shift();
  stats.tickMs.push(performance.now() - started);
}

// ---- alerts: sound and notifications --------------------------------------------------------

function chime() {
  stats.chimes++;
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  try {
    state.audio = state.audio || new Context();
    const osc = state.audio.createOscillator();
    const gain = state.audio.createGain();
    osc.frequency.value = 880;
    gain.gain.value = 0.08;
    osc.connect(gain).connect(state.audio.destination);
    osc.start();
    osc.stop(state.audio.currentTime + 0.15);
  } catch (e) { /* no audio device: the notification and the title still tell */ }
}

function refreshAlerts() {
  const button = $("#alerts");
  button.hidden = state.signedOut;
  if (!("Notification" in window)) {
    button.textContent = "Alerts: sound only";
    button.disabled = true;
    return;
  }
  const permission = Notification.permission;
  button.dataset.permission = permission;
  if (permission === "granted") {
    button.textContent = "Alerts on";
    button.disabled = true;
  } else if (permission === "denied") {
    button.textContent = "Notifications blocked: sound only";
    button.disabled = true;
  } else {
    button.textContent = "Turn on alerts";
    button.disabled = false;
  }
}

async function askAlerts() {
  chime(); // a user gesture: lets the page play sound from now on
  if ("Notification" in window) {
    try { await Notification.requestPermission(); } catch (e) { /* treated as denied */ }
  }
  refreshAlerts();
  const on = "Notification" in window && Notification.permission === "granted";
  announce(`Notifications ${on ? "on" : "off"}`);
}

function alertNew(request) {
  chime();
  const where = request.room ? ` (${request.room})` : "";
  announce(`New request${where}: ${questionOf(request)}`);
  if ("Notification" in window && Notification.permission === "granted") {
    try {
      const note = new Notification(`New request${where}`,
        { body: questionOf(request), tag: request.id });
      note.onclick = () => {
        window.focus();
        const entry = state.open.get(request.id);
        if (entry) entry.card.focus();
      };
      stats.notified++;
    } catch (e) { /* some browsers allow notifications from a service worker only */ }
  }
}

// ---- cards ----------------------------------------------------------------------------------

function peopleOf(request) {
  const onCall = new Set();
  if (request.actor) onCall.add(request.actor);
  for (const line of request.transcript || []) {
    if (line.speaker_id) onCall.add(line.speaker_id);
  }
  const parts = [];
  if (onCall.size) parts.push(el("span", {}, el("b", {}, "On the call: "), [...onCall].join(", ")));
  if ((request.addressed || []).length) {
    parts.push(el("span", {}, " · ", el("b", {}, "Asked: "), request.addressed.join(", ")));
  }
  if ((request.approvers || []).length) {
    const quorum = request.quorum ? ` (${request.quorum} needed)` : "";
    parts.push(el("span", {}, " · ", el("b", {}, "Approvers: "), request.approvers.join(", ") + quorum));
  }
  return el("div", { class: "people" }, ...parts);
}

function transcriptOf(request) {
  const lines = request.transcript || [];
  if (!lines.length) return null;
  return el("div", { class: "transcript", role: "group", "aria-label": "the call's last lines" },
    ...lines.map((line) => el("div", {},
      el("span", { class: "who" }, line.speaker_id || line.role), line.text)));
}

async function send(card, method, params) {
  const error = card.querySelector(".error");
  error.textContent = "";
  for (const button of card.querySelectorAll("button:not(.story-link)")) button.disabled = true;
  const reply = await call(method, params);
  if (reply.error) {
    error.textContent = reply.error.message;
    // 409 being_answered: another operator's answer may not be taken; the request may open again.
    const final = reply.error.code === 409 && !(reply.error.data && reply.error.data.code === "being_answered");
    if (!final) {
      for (const button of card.querySelectorAll("button:not(.story-link)")) button.disabled = false;
    }
    if (reply.error.data && reply.error.data.settled) {
      settle(card.dataset.id, reply.error.data.settled);
    }
  } else {
    settle(card.dataset.id, reply.result.request.settled);
  }
}

function answerControls(request, card) {
  const spec = request.spec || { kind: "free_text" };
  const answer = (value) => send(card, "answer", { id: request.id, answer: value });
  const controls = el("div", { class: "controls" });
  if (spec.kind === "confirm") {
    controls.append(
      el("button", { class: "yes", "data-answer": "yes", "aria-keyshortcuts": "y",
        onclick: () => answer(true) }, "Yes"),
      el("button", { class: "no", "data-answer": "no", "aria-keyshortcuts": "n",
        onclick: () => answer(false) }, "No"));
  } else if (spec.kind === "choices") {
    spec.choices.forEach((choice, index) => {
      const key = index < 9 ? { "aria-keyshortcuts": String(index + 1) } : {};
      controls.append(el("button", { "data-answer": choice.id, ...key,
        onclick: () => answer(choice.id) }, choice.label));
    });
  } else {
    const numeric = spec.kind === "number" || spec.kind === "digits";
    const field = spec.kind === "free_text"
      ? el("textarea", { class: "answer-field", "aria-label": "answer", placeholder: "Type the answer" })
      : el("input", {
          class: "answer-field", type: spec.kind === "number" ? "number" : "text",
          "aria-label": "answer", inputmode: numeric ? "numeric" : "text",
          placeholder: spec.kind === "number"
            ? `number${spec.minimum !== null ? " ≥ " + spec.minimum : ""}${spec.maximum !== null ? " ≤ " + spec.maximum : ""}`
            : `${spec.length || ""} digits`,
        });
    if (spec.kind === "number") {
      if (spec.minimum !== null) field.min = spec.minimum;
      if (spec.maximum !== null) field.max = spec.maximum;
      field.step = "any";
    }
    field.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) { // Shift+Enter: a new line
        event.preventDefault();
        answer(field.value);
      }
    });
    controls.append(field, el("button", { "data-answer": "send",
      onclick: () => answer(field.value) }, "Send answer"));
  }
  const reason = el("input", { type: "text", class: "reason", "aria-label": "reason for rejecting",
    placeholder: "Reason for rejecting" });
  const doReject = () => {
    if (!reason.value.trim()) { card.querySelector(".error").textContent = "Give a reason to reject."; return; }
    send(card, "reject", { id: request.id, reason: reason.value });
  };
  reason.addEventListener("keydown", (event) => {
    if (event.key === "Enter") { event.preventDefault(); doReject(); }
  });
  const reject = el("div", { class: "reject-row" }, reason,
    el("button", { class: "reject", onclick: doReject }, "Reject"));
  return [controls, reject];
}

function readAnswer(text, spec) {
  // The answer as a person reads it: "Yes" / "No", the choice's label, the number or text.
  let parsed;
  try { parsed = JSON.parse(text); } catch (e) { return text; }
  if (!parsed || typeof parsed !== "object" || !("answer" in parsed)) return text;
  const value = parsed.answer;
  if (typeof value === "boolean") return value ? "Yes" : "No";
  const choices = (spec && spec.choices) || [];
  const choice = choices.find((c) => c.id === parsed.choice_id);
  if (choice && (!spec || spec.kind !== "confirm")) return choice.label;
  if (value === null || value === undefined) return "(no answer)";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function describeOutcome(settled, mine, spec) {
  const by = settled.by ? ` by ${settled.by}` : "";
  const at = settled.at ? ` at ${new Date(settled.at).toLocaleTimeString()}` : "";
  const where = mine ? "" : " elsewhere";
  const via = settled.via && !mine ? ` via ${settled.via}` : "";
  switch (settled.status) {
    case "answered": return `Answered${where}${by}${via}${at}: ${readAnswer(settled.text, spec)}`;
    case "rejected": return `Rejected${where}${by}${via}${at}: ${settled.text}`;
    case "timed_out": return `Timed out${at}`;
    case "abandoned": return `Abandoned${at}: the worker handling this call stopped`;
    default: return `Withdrawn${at}${settled.detail ? ": " + settled.detail : ""}`;
  }
}

function describeEntry(entry) {
  const data = entry.data || {};
  const time = new Date(entry.at).toLocaleTimeString();
  switch (entry.kind) {
    case "board": return `${time} board: ${data.event}${data.by ? " by " + data.by : ""}${data.via ? " via " + data.via : ""}`;
    case "opened": return `${time} asked on ${data.channel_type || "?"} (${data.tool})`;
    case "notified": return `${time} people notified`;
    case "noted": return `${time} ${data.note}${data.to ? " to " + data.to.join(", ") : ""}${data.participant ? " " + data.participant + ": " + data.decision : ""}`;
    case "settled": return `${time} ${data.outcome}${data.by ? " by " + data.by : ""}${data.via ? " via " + data.via : ""}`;
    case "delivered": return `${time} the model read: ${data.text}`;
    default: return `${time} ${entry.kind}`;
  }
}

async function showStory(card, id) {
  const old = card.querySelector(".story");
  if (old) { old.remove(); return; }
  const box = el("ol", { class: "story", "aria-label": "story" });
  card.append(box);
  const response = await fetch(`/v1/requests/${encodeURIComponent(id)}/story`,
    { headers: { Authorization: `Bearer ${state.token}` } });
  const body = await response.json();
  if (!response.ok) {
    box.append(el("li", { class: "error" }, body.error ? body.error.message : `HTTP ${response.status}`));
    return;
  }
  for (const entry of body.entries) box.append(el("li", { "data-kind": entry.kind }, describeEntry(entry)));
}

function buildCard(request) {
  const question = questionOf(request);
  const card = el("article", { class: "card", "data-id": request.id, "data-status": "open",
    tabindex: "0", "aria-label": `${request.tool} in ${request.room || "no room"}: ${question}` });
  const countdown = el("span", { class: "countdown" });
  const parts = [
    el("div", { class: "top" },
      el("span", { class: "tool" }, request.tool),
      el("span", { class: "meta" }, `${request.room || "-"} / ${request.channel || "-"} · ${request.channel_type}`),
      el("span", { class: "meta" }, request.actor ? `actor ${request.actor}` : `worker ${request.worker}`),
      el("button", { class: "secondary story-link", type: "button", "aria-keyshortcuts": "s",
        onclick: () => showStory(card, request.id) }, "Story"),
      countdown),
    el("div", { class: "question" }, question),
    peopleOf(request),
    transcriptOf(request),
    ...answerControls(request, card),
    el("div", { class: "error", role: "alert" })];
  card.append(...parts.filter((part) => part !== null));
  return [card, countdown];
}

function place(request, f, at) {
  // Build the card and record it at position `at` of the order; returns the card.
  const [card, countdown] = buildCard(request);
  const entry = { request, card, countdown, key: sortKey(request), hay: haystack(request) };
  state.order.splice(at, 0, request.id);
  state.open.set(request.id, entry);
  const [text, level] = urgencyOf(request, Date.now());
  countdown.textContent = text;
  card.dataset.urgency = level;
  noteOptions(request);
  card.hidden = !matches(entry, f);
  if (!card.hidden) state.shown++;
  return card;
}

function addCard(request, f, quiet) {
  if (state.open.has(request.id)) return;
  const at = insertAt(sortKey(request));
  const next = state.order[at];
  const card = place(request, f || filters(), at);
  $("#queue").insertBefore(card, next === undefined ? null : state.open.get(next).card);
  if (!quiet) {
    refreshCounts();
    if (!card.hidden) alertNew(request); // filtered out (another room, say): counted, not rung
  }
}

function dropOpen(id) {
  const entry = state.open.get(id);
  if (!entry) return null;
  state.open.delete(id);
  state.order.splice(state.order.indexOf(id), 1);
  if (!entry.card.hidden) state.shown--;
  return entry;
}

function settle(id, settled) {
  const open = state.open.get(id);
  if (!open) return;
  const hadFocus = open.card.contains(document.activeElement);
  const nextId = hadFocus ? nearestVisible(id) : null; // before it leaves the order
  const entry = dropOpen(id);
  const card = entry.card;
  card.classList.add("settled");
  card.dataset.status = settled.status;
  card.hidden = false;
  for (const node of card.querySelectorAll(".controls, .reject-row, .countdown")) node.remove();
  const mine = settled.by === state.me && settled.via === "console";
  const text = describeOutcome(settled, mine, entry.request.spec);
  card.append(el("div", { class: "outcome " + settled.status }, text));
  const box = $("#settled");
  box.insertBefore(card, box.firstChild);
  state.settledCount++;
  while (box.children.length > SETTLED_KEPT) box.lastChild.remove();
  refreshCounts();
  announce(text);
  if (hadFocus) {
    const next = nextId && state.open.get(nextId);
    if (next) next.card.focus(); else $("#search").focus();
  }
}

function nearestVisible(id) {
  const at = state.order.indexOf(id);
  for (const step of [1, -1]) {
    for (let i = at + step; i >= 0 && i < state.order.length; i += step) {
      if (!state.open.get(state.order[i]).card.hidden) return state.order[i];
    }
  }
  return null;
}

// ---- keyboard -------------------------------------------------------------------------------

function visibleCards() {
  return state.order.map((id) => state.open.get(id).card).filter((card) => !card.hidden);
}

function moveFocus(step) {
  const cards = visibleCards();
  if (!cards.length) return;
  const current = document.activeElement && document.activeElement.closest(".card");
  const at = cards.indexOf(current);
  const next = at < 0 ? (step > 0 ? 0 : cards.length - 1)
    : Math.min(cards.length - 1, Math.max(0, at + step));
  cards[next].focus();
  cards[next].scrollIntoView({ block: "nearest" });
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  const typing = target.closest && target.closest("input, textarea, select");
  if (typing) {
    if (event.key === "Escape") {
      const card = target.closest(".card");
      if (card) card.focus(); else target.blur();
    }
    return;
  }
  if (event.key === "/") { event.preventDefault(); $("#search").focus(); return; }
  if (event.key === "j" || event.key === "ArrowDown") { event.preventDefault(); moveFocus(1); return; }
  if (event.key === "k" || event.key === "ArrowUp") { event.preventDefault(); moveFocus(-1); return; }
  const card = target.closest && target.closest("#queue .card");
  if (!card) return;
  let selector = null;
  if (event.key === "y") selector = "button[data-answer=yes]";
  else if (event.key === "n") selector = "button[data-answer=no]";
  else if (/^[1-9]$/.test(event.key)) selector = `.controls button[aria-keyshortcuts="${event.key}"]`;
  else if (event.key === "s") selector = "button.story-link";
  if (selector) {
    const button = card.querySelector(selector);
    if (button && !button.disabled) { event.preventDefault(); button.click(); }
    return;
  }
  const field = event.key === "r" ? card.querySelector("input.reason")
    : event.key === "a" ? card.querySelector(".answer-field") : null;
  if (field) { event.preventDefault(); field.focus(); }
}

// ---- the feed -------------------------------------------------------------------------------

function snapshot(requests) {
  const open = new Set(requests.map((r) => r.id));
  for (const id of [...state.open.keys()]) {
    if (!open.has(id)) dropOpen(id).card.remove();
  }
  const f = filters();
  if (state.open.size === 0) {
    // First load: sort once and insert every card in one go.
    const entries = requests.map((request) => ({ request, key: sortKey(request) }));
    entries.sort((a, b) => (before(a.key, b.key) ? -1 : before(b.key, a.key) ? 1 : 0));
    const fragment = document.createDocumentFragment();
    for (const { request } of entries) {
      if (!state.open.has(request.id)) fragment.append(place(request, f, state.order.length));
    }
    $("#queue").append(fragment);
  } else {
    for (const request of requests) addCard(request, f, true);
  }
  refreshCounts();
}

function onMessage(event) {
  const started = performance.now();
  const message = JSON.parse(event.data);
  if (message.id !== undefined && state.calls.has(message.id)) {
    state.calls.get(message.id)(message);
    state.calls.delete(message.id);
    return;
  }
  const params = message.params || {};
  switch (message.method) {
    case "requests.snapshot": {
      snapshot(params.requests);
      stats.snapshotMs = performance.now() - started;
      stats.snapshotSize = params.requests.length;
      requestAnimationFrame(() => { stats.snapshotAt = performance.now(); });
      return;
    }
    case "request.opened": addCard(params.request); break;
    case "request.settled":
    case "request.withdrawn": settle(params.request.id, params.request.settled); break;
    default: return;
  }
  stats.updateMs.push(performance.now() - started);
  requestAnimationFrame(() => stats.frameMs.push(performance.now() - started));
}

function clearDesk() {
  state.open.clear();
  state.order = [];
  state.shown = 0;
  state.settledCount = 0;
  $("#queue").replaceChildren();
  $("#settled").replaceChildren();
  for (const id of ["#f-room", "#f-tool", "#f-actor"]) {
    const select = $(id);
    while (select.options.length > 1) select.lastChild.remove();
  }
  refreshCounts();
}

function showLogin() {
  setStatus("signed out", false);
  $("#desk").hidden = true;
  $("#signout").hidden = true;
  $("#alerts").hidden = true;
  $("#who").textContent = "";
  $("#login").hidden = false;
  $("#token").focus();
}

function signOut() {
  state.signedOut = true;
  sessionStorage.removeItem("voice-hitl-token");
  const session = state.token;
  state.token = null;
  // The server ends the session: the id is refused from now on, wherever it was copied.
  if (session) {
    fetch("/v1/sessions/current", { method: "DELETE", headers: { Authorization: `Bearer ${session}` } })
      .then((response) => announce(response.ok ? "Signed out" : "Signed out here; the service did not confirm"))
      .catch(() => announce("Signed out here; the service could not be reached"));
  }
  const socket = state.socket;
  state.socket = null;
  if (socket) socket.close();
  clearDesk();
  showLogin();
}

async function connect() {
  state.signedOut = false;
  const me = await fetch("/v1/me", { headers: { Authorization: `Bearer ${state.token}` } });
  if (me.status === 401) {
    sessionStorage.removeItem("voice-hitl-token");
    showLogin();
    return;
  }
  const operator = await me.json();
  state.me = operator.name;
  $("#who").textContent = `signed in as ${operator.name}`;
  $("#who").dataset.name = operator.name;
  $("#login").hidden = true;
  $("#desk").hidden = false;
  $("#signout").hidden = false;
  refreshAlerts();
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const url = `${scheme}://${location.host}/v1/feed?client=console&token=${encodeURIComponent(state.token)}`;
  const socket = new WebSocket(url);
  state.socket = socket;
  socket.addEventListener("open", () => setStatus("live", true));
  socket.addEventListener("message", (event) => { if (state.socket === socket) onMessage(event); });
  socket.addEventListener("close", () => {
    if (state.socket !== socket) return; // signed out, or replaced
    setStatus("reconnecting…", false);
    setTimeout(() => { if (state.socket === socket) connect(); }, 1000);
  });
}

// Sign in: the operator's token is exchanged for a session (kept in this tab only); the
// token itself is not kept.
async function signIn(token) {
  const response = await fetch("/v1/sessions", {
    method: "POST", headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) {
    showLogin();
    $("#login-error").textContent = response.status === 401
      ? "That token is not valid." : `The service refused the sign-in (${response.status}).`;
    return;
  }
  const body = await response.json();
  state.token = body.session;
  sessionStorage.setItem("voice-hitl-token", state.token);
  $("#login-error").textContent = "";
  connect();
}

function start() {
  const given = tokenFromPage();
  $("#login").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("#token").value.trim();
    $("#token").value = "";
    signIn(token);
  });
  $("#signout").addEventListener("click", signOut);
  $("#alerts").addEventListener("click", askAlerts);
  $("#filters").addEventListener("submit", (event) => event.preventDefault());
  $("#filters").addEventListener("input", applyFilters);
  $("#filters").addEventListener("change", applyFilters);
  document.addEventListener("keydown", onKey);
  refreshCounts();
  if (!given) showLogin();
  else if (given.startsWith("vhs_")) { state.token = given; connect(); }
  else signIn(given);  // #token=<operator token> in the address: exchanged, then forgotten
  setInterval(tick, 1000);
}

start();
