// The table page: one token's view of one match, pushed by the server; moves predicted by the
// match's own rules running in the browser on this view, then confirmed or rolled back.

import { Api, ApiError, el, gameTitle, remember, takeFragment } from "./session.js";
import { renderActions, renderLog, renderTable, resultText, turnText } from "./render.js";
import { Rules } from "./rules.js";

const STORAGE_KEY = "tablehost.table";
const RECONNECT_MS = 1000;

const page = {
  api: null,
  matchId: null,
  served: null, // the newest view the server sent
  shown: null, // what is on screen: the served view or a prediction
  shownBusy: false, // whether it was drawn while a move was pending (its buttons disabled)
  pending: false,
  sentAt: -1, // the served version a pending move was sent against
  title: null, // the module's name, from the match list
  hintTitle: null, // the title the shown view's display hints give
  rules: null,
  clockTimer: null,
};

function show(view) {
  page.shown = view;
  page.shownBusy = page.pending;
  const onAct = (offer) => act(offer);
  const hints = renderTable(document.getElementById("table"), view, { onAct, predicted: Boolean(view.predicted) });
  renderActions(document.getElementById("actions"), view, { onAct, busy: page.pending });
  renderLog(document.getElementById("log"), view.state);
  page.hintTitle = hints.title || null;
  showTitle();
  document.getElementById("turn").textContent = view.predicted ? "Sending…" : turnText(view);
  const undo = document.getElementById("undo");
  const undoOffer = (view.actions || []).find((offer) => offer.intent === "undo");
  undo.hidden = !undoOffer;
  undo.disabled = page.pending;
  const result = document.getElementById("result");
  result.hidden = !view.game_over;
  result.textContent = resultText(view);
  showClocks(view);
  document.body.dataset.version = String(view.version);
  document.body.dataset.predicted = view.predicted ? "true" : "false";
}

// The game's own title hint, else the module's name once the match list has told it.
function showTitle() {
  document.getElementById("title").textContent = page.hintTitle || page.title || page.matchId;
}

// Clocks as the server sends them ([{player_id, remaining_ms, running}]); a running clock is
// counted down here between pushes.
function showClocks(view) {
  const clocks = document.getElementById("clocks");
  clocks.replaceChildren();
  clearInterval(page.clockTimer);
  if (!Array.isArray(view.clocks) || !view.clocks.length) return;
  const shownAt = Date.now();
  const names = new Map(view.state.players.map((p) => [p.player_id, p.username]));
  const draw = () => {
    clocks.replaceChildren();
    for (const clock of view.clocks) {
      if (!clock || typeof clock.remaining_ms !== "number") continue;
      const left = clock.running && !view.game_over ? clock.remaining_ms - (Date.now() - shownAt) : clock.remaining_ms;
      const seconds = Math.max(0, Math.floor(left / 1000));
      const text = `${names.get(clock.player_id) || clock.player_id} ${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
      const node = el("span", clock.running ? "clock running" : "clock", text);
      node.dataset.playerId = String(clock.player_id);
      clocks.append(node);
    }
  };
  draw();
  page.clockTimer = setInterval(draw, 1000);
}

function notice(text, kind = "info") {
  const node = document.getElementById("notice");
  node.hidden = !text;
  node.textContent = text || "";
  node.className = `notice notice-${kind}`;
}

// A view from the server (a push or the answer to a move) always wins over a prediction.
// What the table draws of a view: all of it but who is connected (the page shows no presence).
function drawn(view) {
  return JSON.stringify({ ...view, connected: null });
}

// A push that would draw what is on screen (the stream's first push repeats the view just
// fetched, plus this page's own connection) is kept but not drawn: redrawing would replace every
// node under the pointer or a test's locator.
function receive(view) {
  if (page.served && view.version < page.served.version) return;
  const unchanged = page.served && page.shown === page.served && !page.shownBusy && !page.pending &&
    view.version === page.served.version && drawn(view) === drawn(page.served);
  if (unchanged) {
    page.served = view;
    page.shown = view;
    return;
  }
  page.served = view;
  if (!page.pending || view.version > page.sentAt) show(view);
}

async function act(offer) {
  if (page.pending || !page.served) return;
  const base = page.served;
  page.pending = true;
  page.sentAt = base.version;
  notice("");
  const path = `/api/matches/${encodeURIComponent(page.matchId)}`;
  const sent =
    offer.intent === "undo"
      ? page.api.post(`${path}/undo`, { version: base.version })
      : page.api.post(`${path}/actions`, { action: offer.action, version: base.version });
  const prediction = page.rules ? page.rules.predict(base, offer) : Promise.resolve(null);
  prediction.then((predicted) => {
    if (predicted && page.pending && page.served === base) show(predicted);
  });
  try {
    const answer = await sent;
    page.pending = false;
    receive(answer);
    if (page.shown !== page.served) show(page.served);
  } catch (error) {
    page.pending = false;
    // Roll back: the newest server view replaces whatever was predicted.
    show(page.served);
    const why = error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
    notice(`Refused — ${why}`, "error");
  }
}

async function follow() {
  const path = `/api/matches/${encodeURIComponent(page.matchId)}/events`;
  for (;;) {
    try {
      await page.api.events(path, (name, data) => {
        if (name === "view") receive(data);
      });
      if (page.served && page.served.game_over) return;
    } catch (error) {
      if (error instanceof ApiError && error.status < 500 && error.status !== 429) {
        notice(`The server refused this token: ${error.message}`, "error");
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
}

async function open(matchId, token) {
  page.api = new Api(token);
  page.matchId = matchId;
  const path = `/api/matches/${encodeURIComponent(matchId)}`;
  let first;
  try {
    first = await page.api.get(`${path}/view`);
  } catch (error) {
    notice(`Cannot open ${matchId}: ${error.message}`, "error");
    document.getElementById("token-form").hidden = false;
    return;
  }
  receive(first);
  page.api.get("/api/matches").then((matches) => {
    const summary = matches.find((m) => m.match_id === matchId);
    if (summary) {
      page.title = gameTitle(summary.module_name);
      document.title = `${page.title} — tablehost`;
      showTitle(); // the title only: redrawing the table would replace its nodes
    }
  }).catch(() => {});
  if (first.viewer !== null && !first.game_over) {
    page.rules = new Rules(() => page.api.bytes(`${path}/module`));
    page.rules.start().catch(() => {
      page.rules = null; // no prediction; the table still works through the server
    });
  }
  document.getElementById("undo").addEventListener("click", () => {
    const offer = (page.served.actions || []).find((o) => o.intent === "undo");
    if (offer) act(offer);
  });
  follow();
}

function main() {
  const saved = takeFragment(STORAGE_KEY);
  if (saved.match && saved.token) {
    open(saved.match, saved.token);
    return;
  }
  const form = document.getElementById("token-form");
  form.hidden = false;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const values = { match: form.match.value.trim(), token: form.token.value.trim() };
    remember(STORAGE_KEY, values);
    form.hidden = true;
    open(values.match, values.token);
  });
}

main();
