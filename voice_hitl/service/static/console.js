// voice-hitl operator console: the live queue over the JSON-RPC feed (no build step).
"use strict";

const state = { token: null, socket: null, cards: new Map(), calls: new Map(), nextId: 1 };
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

function countdownText(deadline) {
  if (!deadline) return ["no deadline", ""];
  const left = Math.round((Date.parse(deadline) - Date.now()) / 1000);
  if (left <= 0) return ["deadline passed", "over"];
  const minutes = Math.floor(left / 60);
  const seconds = String(left % 60).padStart(2, "0");
  return [`${minutes}:${seconds} left`, left < 30 ? "soon" : ""];
}

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
  return el("div", { class: "transcript", "aria-label": "transcript before the question" },
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
    if (reply.error.code !== 409) {
      for (const button of card.querySelectorAll("button:not(.story-link)")) button.disabled = false;
    }
    if (reply.error.data && reply.error.data.settled) {
      showOutcome(card, reply.error.data.settled);
    }
  } else {
    showOutcome(card, reply.result.request.settled);
  }
}

function answerControls(request, card) {
  const spec = request.spec || { kind: "free_text" };
  const answer = (value) => send(card, "answer", { id: request.id, answer: value });
  const controls = el("div", { class: "controls" });
  if (spec.kind === "confirm") {
    controls.append(
      el("button", { class: "yes", "data-answer": "yes", onclick: () => answer(true) }, "Yes"),
      el("button", { class: "no", "data-answer": "no", onclick: () => answer(false) }, "No"));
  } else if (spec.kind === "choices") {
    for (const choice of spec.choices) {
      controls.append(el("button", { "data-answer": choice.id, onclick: () => answer(choice.id) },
        choice.label));
    }
  } else {
    const numeric = spec.kind === "number" || spec.kind === "digits";
    const field = spec.kind === "free_text"
      ? el("textarea", { "aria-label": "answer", placeholder: "Type the answer" })
      : el("input", {
          type: spec.kind === "number" ? "number" : "text", "aria-label": "answer",
          inputmode: numeric ? "numeric" : "text",
          placeholder: spec.kind === "number"
            ? `number${spec.minimum !== null ? " ≥ " + spec.minimum : ""}${spec.maximum !== null ? " ≤ " + spec.maximum : ""}`
            : `${spec.length || ""} digits`,
        });
    if (spec.kind === "number") {
      if (spec.minimum !== null) field.min = spec.minimum;
      if (spec.maximum !== null) field.max = spec.maximum;
      field.step = "any";
    }
    controls.append(field, el("button", { "data-answer": "send",
      onclick: () => answer(field.value) }, "Send answer"));
  }
  const reason = el("input", { type: "text", "aria-label": "reason", placeholder: "Reason for rejecting" });
  const reject = el("div", { class: "reject-row" }, reason,
    el("button", { class: "reject", onclick: () => {
      if (!reason.value.trim()) { card.querySelector(".error").textContent = "Give a reason to reject."; return; }
      send(card, "reject", { id: request.id, reason: reason.value });
    } }, "Reject"));
  return [controls, reject];
}

function describeOutcome(settled, mine) {
  const by = settled.by ? ` by ${settled.by}` : "";
  const at = settled.at ? ` at ${new Date(settled.at).toLocaleTimeString()}` : "";
  const where = mine ? "" : " elsewhere";
  switch (settled.status) {
    case "answered": {
      let value = settled.text;
      try { value = JSON.stringify(JSON.parse(settled.text).answer); } catch (e) { /* raw */ }
      return `Answered${where}${by}${at}: ${value}`;
    }
    case "rejected": return `Rejected${where}${by}${at}: ${settled.text}`;
    case "timed_out": return `Timed out${at}`;
    case "abandoned": return `Abandoned${at}: the worker handling this call stopped`;
    default: return `Withdrawn${at}${settled.detail ? ": " + settled.detail : ""}`;
  }
}

function showOutcome(card, settled) {
  if (card.classList.contains("settled")) return;
  card.classList.add("settled");
  card.dataset.status = settled.status;
  for (const node of card.querySelectorAll(".controls, .reject-row")) node.remove();
  card.querySelector(".countdown").textContent = "";
  const me = $("#who").dataset.name;
  const outcome = el("div", { class: "outcome " + settled.status, role: "status" },
    describeOutcome(settled, settled.by === me && settled.via === "console"));
  card.append(outcome,
    el("button", { class: "secondary", onclick: () => { card.remove(); state.cards.delete(card.dataset.id); refreshEmpty(); } }, "Dismiss"));
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

function addCard(request) {
  if (state.cards.has(request.id)) return;
  const card = el("article", { class: "card", "data-id": request.id, "data-status": "open" });
  const countdown = el("span", { class: "countdown", "data-deadline": request.deadline || "" });
  const parts = [
    el("div", { class: "top" },
      el("span", { class: "tool" }, request.tool),
      el("span", { class: "meta" }, `${request.room || "-"} / ${request.channel || "-"} · ${request.channel_type}`),
      el("span", { class: "meta" }, `worker ${request.worker}`),
      el("button", { class: "secondary story-link", type: "button", onclick: () => showStory(card, request.id) }, "Story"),
      countdown),
    el("div", { class: "question" }, questionOf(request)),
    peopleOf(request),
    transcriptOf(request),
    ...answerControls(request, card),
    el("div", { class: "error", role: "alert" })];
  card.append(...parts.filter((part) => part !== null));
  state.cards.set(request.id, card);
  $("#queue").append(card);
  tick();
  refreshEmpty();
}

function refreshEmpty() {
  $("#empty").hidden = state.cards.size > 0;
}

function tick() {
  for (const node of document.querySelectorAll(".card:not(.settled) .countdown")) {
    const [text, level] = countdownText(node.dataset.deadline);
    node.textContent = text;
    node.className = "countdown " + level;
  }
}

function onMessage(event) {
  const message = JSON.parse(event.data);
  if (message.id !== undefined && state.calls.has(message.id)) {
    state.calls.get(message.id)(message);
    state.calls.delete(message.id);
    return;
  }
  const params = message.params || {};
  switch (message.method) {
    case "requests.snapshot": {
      const open = new Set(params.requests.map((r) => r.id));
      for (const [id, card] of state.cards) {
        if (!open.has(id) && !card.classList.contains("settled")) {
          card.remove(); state.cards.delete(id);
        }
      }
      params.requests.forEach(addCard);
      refreshEmpty();
      break;
    }
    case "request.opened": addCard(params.request); break;
    case "request.settled":
    case "request.withdrawn": {
      const card = state.cards.get(params.request.id);
      if (card) showOutcome(card, params.request.settled);
      break;
    }
  }
}

async function connect() {
  const me = await fetch("/v1/me", { headers: { Authorization: `Bearer ${state.token}` } });
  if (me.status === 401) {
    sessionStorage.removeItem("voice-hitl-token");
    setStatus("signed out", false);
    $("#login").hidden = false;
    return;
  }
  const operator = await me.json();
  $("#who").textContent = `signed in as ${operator.name}`;
  $("#who").dataset.name = operator.name;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const url = `${scheme}://${location.host}/v1/feed?client=console&token=${encodeURIComponent(state.token)}`;
  const socket = new WebSocket(url);
  state.socket = socket;
  socket.addEventListener("open", () => setStatus("live", true));
  socket.addEventListener("message", onMessage);
  socket.addEventListener("close", () => {
    setStatus("reconnecting…", false);
    setTimeout(connect, 1000);
  });
}

function start() {
  state.token = tokenFromPage();
  $("#login").addEventListener("submit", (event) => {
    event.preventDefault();
    state.token = $("#token").value.trim();
    sessionStorage.setItem("voice-hitl-token", state.token);
    $("#login").hidden = true;
    connect();
  });
  if (!state.token) {
    setStatus("signed out", false);
    $("#login").hidden = false;
  } else {
    connect();
  }
  setInterval(tick, 1000);
}

start();
