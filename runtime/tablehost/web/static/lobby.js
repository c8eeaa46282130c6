// The lobby: the games (modules) and matches a token may see; the admin uploads modules,
// creates matches and hands out seat links. A seat link carries its token in the #fragment.

import { Api, el, gameTitle, remember, takeFragment } from "./session.js";

const STORAGE_KEY = "tablehost.lobby";
const REFRESH_MS = 3000;
let api = null;
let who = null;
// Seats taken with the Join button in this tab: match id -> [{username, token}]. A seat's token
// is shown once by the server, so its link stays on the match's row across refreshes.
const joinedSeats = new Map();

function notice(text, kind = "info") {
  const node = document.getElementById("notice");
  node.hidden = !text;
  node.textContent = text || "";
  node.className = `notice notice-${kind}`;
}

export function tableLink(matchId, token) {
  const fragment = new URLSearchParams({ match: matchId, token });
  return `/table#${fragment.toString()}`;
}

function linkButton(text, matchId, token) {
  const link = el("a", "button-link", text);
  link.href = tableLink(matchId, token);
  link.target = "_blank";
  link.rel = "noopener";
  return link;
}

function moduleCard(module) {
  const card = el("div", "module");
  card.dataset.moduleId = module.module_id;
  card.append(el("h3", null, gameTitle(module.name)), el("code", "module-id", module.module_id.slice(0, 12)));
  if (typeof module.description === "string" && module.description) card.append(el("p", "module-description", module.description));
  if (who.kind !== "admin") return card;
  const form = el("form", "create-form");
  const seats = el("input");
  seats.type = "number";
  seats.name = "seats";
  seats.min = "1";
  seats.max = "8";
  // A module's own seat counts, once the server lists them (game metadata), else two.
  const fewest = Number.isInteger(module.min_players) ? module.min_players : 2;
  seats.value = String(fewest);
  if (Number.isInteger(module.min_players)) seats.min = String(module.min_players);
  if (Number.isInteger(module.max_players)) seats.max = String(Math.min(module.max_players, 64));
  const names = el("input");
  names.name = "names";
  names.placeholder = "names, comma-separated (optional)";
  const label = el("label", null, "Seats ");
  label.append(seats);
  // Unnamed seats left open: the match waits, and players take them with the Join button.
  const open = el("input");
  open.type = "checkbox";
  open.name = "open";
  const openLabel = el("label", "open-seats", " leave unnamed seats open to join");
  openLabel.prepend(open);
  // Seats the server plays itself, as `tablehost create --bot SEAT=BOT`: "2=mcts:300, 3=random".
  const bots = el("input");
  bots.name = "bots";
  bots.placeholder = "computer seats, e.g. 2=mcts:300 (optional)";
  const button = el("button", null, "Create match");
  form.append(label, names, bots, openLabel, button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const count = Number(seats.value);
    const given = names.value.split(",").map((s) => s.trim());
    let bySeat;
    try {
      bySeat = parseBots(bots.value, count);
    } catch (error) {
      notice(error.message, "error");
      return;
    }
    const body = {
      module_id: module.module_id,
      seats: Array.from({ length: count }, (_, i) => ({
        username: given[i] || "",
        color: "",
        open: open.checked && !given[i] && !bySeat.has(i + 1),
        bot: bySeat.get(i + 1) || "",
      })),
    };
    try {
      const created = await api.post("/api/matches", body);
      notice("");  // an earlier refusal no longer stands
      showCreated(module, created);
      refresh();
    } catch (error) {
      notice(`Could not create the match: ${error.message}`, "error");
    }
  });
  card.append(form);
  return card;
}

/**
 * "2=mcts:300, 3=random" as seat number -> bot name; the server checks the names. Throws an
 * Error naming the entry that is not SEAT=BOT with SEAT one of 1..count, or a seat given twice.
 */
export function parseBots(text, count) {
  const bySeat = new Map();
  for (const entry of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const match = /^([0-9]+)\s*=\s*(\S+)$/.exec(entry);
    const seat = match ? Number(match[1]) : 0;
    if (!match || seat < 1 || seat > count) {
      throw new Error(`"${entry.slice(0, 40)}" is not SEAT=BOT for one of seats 1 to ${count} (e.g. 2=mcts:300)`);
    }
    if (bySeat.has(seat)) throw new Error(`seat ${seat} is given a bot twice`);
    bySeat.set(seat, match[2]);
  }
  return bySeat;
}

function showCreated(module, created) {
  const box = document.getElementById("created");
  const body = document.getElementById("created-body");
  box.hidden = false;
  box.dataset.matchId = created.match_id;
  const list = el("ul", "seat-links");
  for (const seat of created.seats) {
    const item = el("li");
    item.append(el("span", "seat-name", `${seat.username} (seat ${seat.player_id})`), " ");
    // A bot seat has no token: the server plays it.
    item.append(seat.token ? linkButton("Open seat", created.match_id, seat.token) : el("span", "bot-seat", "played by the server"));
    item.dataset.playerId = String(seat.player_id);
    list.append(item);
  }
  const spectator = el("li");
  spectator.append(el("span", "seat-name", "Spectator"), " ", linkButton("Watch", created.match_id, created.spectator_token));
  list.append(spectator);
  const openSeats = Array.isArray(created.open_seats) ? created.open_seats.length : 0;
  body.replaceChildren(
    el("p", null, `${gameTitle(module.name)}: match ${created.match_id}. Give each player their seat link; a link is the seat's key.`),
    list,
  );
  if (openSeats) {
    body.append(el("p", null, `${openSeats} seat(s) open: players take them with the match's Join button below (or its spectator link, the invitation).`));
  }
}

function openSeatIds(match) {
  return match.status === "waiting" && Array.isArray(match.open_seats) ? match.open_seats : [];
}

/** The Players cell: each seat's name in seat order, an open seat as "open (seat N)". */
export function seatsText(match) {
  const open = openSeatIds(match);
  return match.players
    .map((p) => (open.includes(p.player_id) || !p.username ? `open (seat ${p.player_id})` : p.username))
    .join(", ");
}

/** The Status cell: waiting for N players, to play: names, over, or aborted. */
export function statusText(match) {
  if (match.status === "aborted") return "aborted";
  if (match.game_over) return "over";
  const open = openSeatIds(match).length;
  if (match.status === "waiting") return `waiting for ${open} player${open === 1 ? "" : "s"}`;
  const active = match.players.filter((p) => match.active_player_ids.includes(p.player_id)).map((p) => p.username);
  return `to play: ${active.join(", ")}`;
}

function matchRow(match) {
  const row = el("tr");
  row.dataset.matchId = match.match_id;
  row.append(
    el("td", null, gameTitle(match.module_name)),
    el("td", null, seatsText(match)),
    el("td", null, String(match.version)),
    el("td", null, statusText(match)),
  );
  const open = el("td", "match-links");
  for (const seat of joinedSeats.get(match.match_id) || []) {
    open.append(linkButton(`Play as ${seat.username}`, match.match_id, seat.token), " ");
  }
  if (who.kind === "admin") {
    // The admin is served the spectator view of any match.
    open.append(linkButton("Watch", match.match_id, api.token));
  } else if (who.match_id === match.match_id) {
    open.append(linkButton(who.kind === "seat" ? "Play" : "Watch", match.match_id, api.token));
  }
  // Open seats of a waiting match: the admin or the match's spectator token (its invitation) joins.
  const invited = who.kind === "admin" || (who.kind === "spectator" && who.match_id === match.match_id);
  if (invited && match.status === "waiting" && Array.isArray(match.open_seats) && match.open_seats.length) {
    const join = el("button", "join", `Join (${match.open_seats.length} open)`);
    join.type = "button";
    join.addEventListener("click", () => joinMatch(match));
    open.append(join);
  }
  row.append(open);
  return row;
}

async function joinMatch(match) {
  const username = window.prompt("Your name at this table");
  if (!username) return;
  try {
    const joined = await api.post(`/api/matches/${encodeURIComponent(match.match_id)}/join`, { username });
    // The seat's token is shown once: its link is the seat's key, kept on the row.
    if (!joinedSeats.has(joined.match_id)) joinedSeats.set(joined.match_id, []);
    joinedSeats.get(joined.match_id).push({ username: joined.username, token: joined.token });
    notice(`${joined.username} took seat ${joined.player_id} (${joined.status}). Keep the link: it is the seat's key.`);
    await refresh();
  } catch (error) {
    notice(`The server refused: ${error.message}`, "error");
  }
}

async function refresh() {
  try {
    const [modules, matches] = await Promise.all([api.get("/api/modules"), api.get("/api/matches")]);
    const list = document.getElementById("module-list");
    const key = modules.map((m) => m.module_id).join(",");
    if (list.dataset.key !== key) {
      // Rebuilt only when the modules change, so a half-filled form survives the refresh.
      list.dataset.key = key;
      list.replaceChildren(...modules.map(moduleCard));
      if (!modules.length) list.append(el("p", "empty", "No games yet. Upload a module (tablehost upload GAME.wasm, or below)."));
    }
    document.getElementById("match-rows").replaceChildren(...matches.map(matchRow));
    document.getElementById("matches").hidden = false;
  } catch (error) {
    notice(`The server refused: ${error.message}`, "error");
  }
}

async function upload(files) {
  for (const file of files) {
    const name = file.name.replace(/\.wasm$/, "");
    try {
      await api.post(`/api/modules?name=${encodeURIComponent(name)}`, await file.arrayBuffer());
    } catch (error) {
      notice(`${file.name}: ${error.message}`, "error");
      return;
    }
  }
  notice(`Uploaded ${files.length} module(s).`);
  refresh();
}

async function enter(token) {
  api = new Api(token);
  try {
    who = await api.get("/api/whoami");
  } catch (error) {
    notice(`Unknown token: ${error.message}`, "error");
    sessionStorage.removeItem(STORAGE_KEY);
    document.getElementById("token-form").hidden = false;
    return;
  }
  document.getElementById("who").textContent =
    who.kind === "admin" ? "admin" : `${who.kind}${who.player_id ? " " + who.player_id : ""} of ${who.match_id}`;
  document.getElementById("forget").hidden = false;
  document.getElementById("games").hidden = false;
  document.getElementById("upload-form").hidden = who.kind !== "admin";
  await refresh();
  setInterval(refresh, REFRESH_MS);
}

function main() {
  const saved = takeFragment(STORAGE_KEY);
  const token = saved.admin || saved.token;
  document.getElementById("forget").addEventListener("click", () => {
    sessionStorage.removeItem(STORAGE_KEY);
    location.reload();
  });
  document.querySelector("#upload-form input").addEventListener("change", (event) => upload([...event.target.files]));
  if (token) {
    enter(token);
    return;
  }
  const form = document.getElementById("token-form");
  form.hidden = false;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = form.token.value.trim();
    remember(STORAGE_KEY, { token: value });
    form.hidden = true;
    enter(value);
  });
}

main();
