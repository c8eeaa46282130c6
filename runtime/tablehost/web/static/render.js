// The generic renderer: any module's view as a table (docs/abi.md, "Display hints").
// Everything a module says reaches the page through textContent and checked style values,
// never as HTML, so a module cannot run code in the page.

import { el } from "./session.js";

const LAYOUTS = new Set(["row", "fan", "stack", "line", "count", "column"]);
const SHAPES = new Set(["disc", "card", "tile", "token", "square"]);
const AREAS = new Set(["center", "seat"]);
const ANCHORS = new Set(["top", "bottom"]);
const SPACE_SHAPES = new Set(["triangle-up", "triangle-down"]);
const FACT_KINDS = new Set(["text", "dice", "player"]);
const DIE_FACES = ["⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];
// A seat's colour when its player has none (the lobby leaves colour to the server).
const SEAT_PALETTE = ["#c0392b", "#2e86c1", "#27ae60", "#8e44ad", "#d68910", "#17a589"];

// ------------------------------------------------------------ hints, checked

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function color(value) {
  return typeof value === "string" && /^(#[0-9a-fA-F]{3,8}|[a-z]{3,20})$/.test(value) ? value : null;
}

function text(value, max) {
  return typeof value === "string" && value.length > 0 ? value.slice(0, max) : null;
}

function small(value, max) {
  return Number.isInteger(value) && value >= 0 && value < max ? value : null;
}

function kindHint(raw) {
  if (!isObject(raw)) return {};
  return {
    glyph: typeof raw.glyph === "string" ? raw.glyph.slice(0, 8) : null, // "" draws no glyph
    color: color(raw.color),
    textColor: color(raw.text_color),
    shape: SHAPES.has(raw.shape) ? raw.shape : null,
  };
}

// A rule draws a kind from its name, so a module need not list secret faces:
//   {"suffixes": {"H": {"glyph": "♥", ...}}, ...}  "QH" -> glyph "Q♥" (+ the suffix's colours)
//   {"separator": "-", "joiner": "│", ...}         "6-4" -> glyph "6│4"
// The rule's own shape and colours apply to every kind it draws. First matching rule wins.
function ruleHint(rule, name) {
  if (!isObject(rule) || typeof name !== "string" || name.length > 32) return null;
  const base = kindHint(rule);
  if (isObject(rule.suffixes)) {
    for (const [suffix, extra] of Object.entries(rule.suffixes)) {
      if (suffix && name.length > suffix.length && name.endsWith(suffix)) {
        const look = merged(base, kindHint(extra));
        look.glyph = name.slice(0, -suffix.length) + (look.glyph ?? suffix);
        return look;
      }
    }
    return null;
  }
  if (typeof rule.separator === "string" && rule.separator && name.includes(rule.separator)) {
    const joiner = typeof rule.joiner === "string" ? rule.joiner.slice(0, 4) : rule.separator;
    return { ...base, glyph: name.split(rule.separator).join(joiner).slice(0, 12) };
  }
  return null;
}

// A fact is a value the module keeps in its state, drawn with a label (docs/abi.md section 19):
//   {"path": ["betting", "street"], "label": "Street", "as": "text", "omit": ["preflop"]}
// The path is 1-4 keys (strings) or indexes (integers); only own members are followed, so a
// path can never reach the prototype. A value that is missing, not a scalar (or, for "dice",
// a list of 1..6), or listed in "omit" draws nothing.
function factHint(raw) {
  if (!isObject(raw) || !Array.isArray(raw.path) || raw.path.length < 1 || raw.path.length > 4) return null;
  const path = raw.path.filter((key) => (typeof key === "string" && key.length <= 40) || small(key, 1024) !== null);
  if (path.length !== raw.path.length) return null;
  const omit = Array.isArray(raw.omit) ? raw.omit.slice(0, 8).filter((v) => v === null || typeof v !== "object") : [];
  return { path, label: text(raw.label, 24), as: FACT_KINDS.has(raw.as) ? raw.as : "text", omit, color: color(raw.color) };
}

function factsHint(raw) {
  return Array.isArray(raw) ? raw.slice(0, 16).map(factHint).filter(Boolean) : [];
}

function lookup(root, path) {
  let value = root;
  for (const key of path) {
    if (typeof key === "string" ? !isObject(value) || !Object.hasOwn(value, key) : !Array.isArray(value) || key >= value.length) {
      return undefined;
    }
    value = value[key];
  }
  return value;
}

// The fact's value in `root` as text (or die faces), or null when there is nothing to draw.
export function factText(fact, root, names) {
  const value = lookup(root, fact.path);
  if (value === undefined || value === null || fact.omit.includes(value)) return null;
  if (fact.as === "dice") {
    const dice = Array.isArray(value) ? value : [value];
    if (!dice.length || dice.length > 8 || !dice.every((d) => Number.isInteger(d) && d >= 1 && d <= 6)) return null;
    return dice.map((d) => DIE_FACES[d - 1]).join("");
  }
  if (fact.as === "player") return Number.isInteger(value) && names.has(value) ? names.get(value) : null;
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : null;
  if (typeof value === "boolean") return value ? "yes" : "no";
  return typeof value === "string" && value.length ? value.slice(0, 40) : null;
}

function factNode(fact, root, names, className) {
  const shown = factText(fact, root, names);
  if (shown === null) return null;
  const node = el("span", `${className} fact-${fact.as}`);
  if (fact.color) {
    node.classList.add("tinted");
    node.style.setProperty("--fact-color", fact.color);
  }
  if (fact.label) node.append(el("span", "fact-label", fact.label));
  node.append(el("span", "fact-value", shown));
  return node;
}

function spaceHint(raw) {
  if (!isObject(raw)) return {};
  return {
    board: text(raw.board, 40),
    row: small(raw.row, 64),
    col: small(raw.col, 64),
    color: color(raw.color),
    layout: LAYOUTS.has(raw.layout) ? raw.layout : null,
    label: text(raw.label, 40),
    seat: Number.isInteger(raw.seat) ? raw.seat : null,
    area: AREAS.has(raw.area) ? raw.area : null,
    order: Number.isInteger(raw.order) ? raw.order : null,
    anchor: ANCHORS.has(raw.anchor) ? raw.anchor : null,
    shape: SPACE_SHAPES.has(raw.shape) ? raw.shape : null,
    seatLabels: isObject(raw.seat_labels) ? raw.seat_labels : null,
    badge: factHint(raw.badge),
    ownerPath: factHint({ path: raw.owner_path }),
    caption: factHint(raw.caption),
  };
}

function merged(a, b) {
  const out = { ...a };
  for (const [key, value] of Object.entries(b)) if (value !== null && value !== undefined) out[key] = value;
  return out;
}

export function displayHints(state) {
  const raw = isObject(state.meta_data) && isObject(state.meta_data.display) ? state.meta_data.display : {};
  const kinds = isObject(raw.kinds) ? raw.kinds : {};
  const spaces = isObject(raw.spaces) ? raw.spaces : {};
  const spaceKinds = isObject(raw.space_kinds) ? raw.space_kinds : {};
  const boards = isObject(raw.boards) ? raw.boards : {};
  const rules = Array.isArray(raw.kind_rules) ? raw.kind_rules.slice(0, 16) : [];
  const seatKinds = isObject(raw.seat_kinds) ? raw.seat_kinds : {};
  return {
    title: text(raw.title, 60),
    tableFacts: factsHint(raw.table_facts),
    seatFacts: factsHint(raw.seat_facts),
    seatKind(playerId) {
      const key = String(playerId);
      return Object.hasOwn(seatKinds, key) ? text(seatKinds[key], 40) : null;
    },
    board(name) {
      const hint = Object.hasOwn(boards, name) && isObject(boards[name]) ? boards[name] : {};
      const cell = Number.isInteger(hint.cell_px) && hint.cell_px >= 24 && hint.cell_px <= 120 ? hint.cell_px : null;
      const row = Number.isInteger(hint.row_px) && hint.row_px >= 24 && hint.row_px <= 400 ? hint.row_px : null;
      const flips = isObject(hint.seat_flips) ? hint.seat_flips : {};
      return { color: color(hint.color), label: text(hint.label, 40), cell, row, flips };
    },
    kind(name) {
      if (typeof name === "string" && Object.hasOwn(kinds, name)) return kindHint(kinds[name]);
      for (const rule of rules) {
        const look = ruleHint(rule, name);
        if (look) return look;
      }
      return {};
    },
    space(space) {
      const byKind = Object.hasOwn(spaceKinds, space.kind) ? spaceHint(spaceKinds[space.kind]) : {};
      const byId = Object.hasOwn(spaces, space.space_id) ? spaceHint(spaces[space.space_id]) : {};
      return merged(byKind, byId);
    },
  };
}

// ------------------------------------------------------------ actions by target

export function actionKey(action) {
  if (action.type === "space_click") return `space:${action.space_id}`;
  if (action.type === "piece_click") return `piece:${action.space_id}:${action.index}`;
  return `button:${action.button ? action.button.id : ""}`;
}

function offersByTarget(actions) {
  const byKey = new Map();
  for (const offer of actions) {
    if (offer.intent === "undo") continue;
    const key = actionKey(offer.action);
    if (!byKey.has(key)) byKey.set(key, offer);
  }
  return byKey;
}

function markOffered(node, offer, onAct) {
  if (!offer) return;
  node.classList.add("offered", `intent-${offer.intent}`);
  node.title = `${offer.label || ""} (${offer.intent})`;
  node.dataset.intent = offer.intent;
  node.tabIndex = 0;
  const act = (event) => {
    event.stopPropagation();
    onAct(offer);
  };
  node.addEventListener("click", act);
  node.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") act(event);
  });
}

// ------------------------------------------------------------ pieces and spaces

function pieceNode(piece, index, space, hints, offers, onAct) {
  const own = piece.private_kind !== undefined && piece.private_kind !== null;
  // Later hints win: the public kind's, the piece's public ones, then (for its viewers) the private.
  const ownHint = (values) => (isObject(values) ? kindHint(values.display) : {});
  let look = merged(hints.kind(piece.public_kind), ownHint(piece.public_state));
  if (own) {
    // What the piece really is replaces how it looks from outside (a card back's colour), but
    // keeps its shape unless the private kind says otherwise.
    look = merged({ shape: look.shape }, merged(hints.kind(piece.private_kind), ownHint(piece.private_state)));
  }
  const node = el("div", `piece shape-${look.shape || "token"}`);
  node.dataset.spaceId = space.space_id;
  node.dataset.index = String(index);
  node.dataset.kind = piece.public_kind;
  if (own) {
    node.dataset.privateKind = piece.private_kind;
    node.classList.add("seen-privately");
  }
  const glyph = look.glyph ?? (own ? piece.private_kind : piece.public_kind);
  node.append(el("span", "glyph", glyph));
  if ([...glyph].length > 5) node.classList.add("long-glyph");
  if (look.color) node.style.setProperty("--piece-color", look.color);
  if (look.textColor) node.style.setProperty("--piece-text", look.textColor);
  if (piece.owner !== null && piece.owner !== undefined) node.dataset.owner = String(piece.owner);
  if (Number.isInteger(piece.count)) {
    node.classList.add("hidden-group");
    node.append(el("span", "count", `×${piece.count}`));
    node.title = `${piece.count} hidden`;
  }
  const hint = hints.space(space);
  if (hint.caption) {
    // e.g. who played a card of the trick (display hint "caption", read from the piece)
    const caption = factText(hint.caption, piece.public_state, hints.names);
    if (caption !== null) node.append(el("span", "caption", caption));
  }
  markOffered(node, offers.get(`piece:${space.space_id}:${index}`), onAct);
  return node;
}

function spaceNode(space, hint, hints, offers, onAct, { onBoard = false } = {}) {
  const layout = hint.layout || (space.arrangement === "collection" ? "fan" : onBoard ? "stack" : "row");
  const node = el("div", `space layout-${layout} kind-${cssWord(space.kind)}`);
  node.dataset.spaceId = space.space_id;
  if (hint.color) node.style.setProperty("--space-color", hint.color);
  if (hint.shape) node.classList.add(`shape-${hint.shape}`);
  if (hint.anchor) node.classList.add(`anchor-${hint.anchor}`);
  if (onBoard) {
    node.classList.add("cell");
    node.style.gridRow = String((hint.row ?? 0) + 1);
    node.style.gridColumn = String((hint.col ?? 0) + 1);
    const label = labelFor(hint, hints.viewer);
    if (label) node.append(el("div", "cell-label", label));
  } else {
    node.append(el("div", "space-label", labelFor(hint, hints.viewer) || space.space_id));
  }
  // The player a space belongs to by the game's own record (display hint "owner_path"), e.g. a
  // territory's holder: the space and its badge take that seat's colour.
  const holder = hint.ownerPath ? lookup(space.public_state, hint.ownerPath.path) : undefined;
  const holderColor = Number.isInteger(holder) ? hints.seatColor(holder) : null;
  if (holderColor) {
    node.classList.add("held");
    node.style.setProperty("--holder-color", holderColor);
    node.dataset.holder = String(holder);
  }
  if (hint.badge) {
    const shown = factText(hint.badge, space.public_state, hints.names);
    if (shown !== null) {
      const badge = el("span", "badge", shown);
      if (hint.badge.label) badge.title = hint.badge.label;
      node.append(badge);
    }
  }
  const pieces = el("div", "pieces");
  if (layout === "column") pieces.style.setProperty("--count", String(Math.max(1, space.pieces.length)));
  const total = space.pieces.reduce((sum, piece) => sum + (Number.isInteger(piece.count) ? piece.count : 1), 0);
  if (layout === "count" || (layout === "stack" && !onBoard && space.pieces.length > 0)) {
    // A stack shows its top piece and how many there are; a count only the number.
    const top = space.pieces.length - 1;
    if (layout === "stack") pieces.append(pieceNode(space.pieces[top], top, space, hints, offers, onAct));
    // A lone hidden group already shows its count.
    if (layout === "count" || space.pieces[top].count !== total) pieces.append(el("span", "stack-count", String(total)));
    // Offers on pieces under the top stay reachable from the action list.
  } else {
    space.pieces.forEach((piece, index) => pieces.append(pieceNode(piece, index, space, hints, offers, onAct)));
  }
  if (!onBoard && total === 0) pieces.append(el("span", "empty", "—"));
  node.append(pieces);
  markOffered(node, offers.get(`space:${space.space_id}`), onAct);
  return node;
}

// A space's label as the viewing seat calls it (display hint "seat_labels": a backgammon
// point's number counts from each side's own home), else its "label".
function labelFor(hint, viewer) {
  if (hint.seatLabels && Number.isInteger(viewer) && Object.hasOwn(hint.seatLabels, String(viewer))) {
    const own = text(hint.seatLabels[String(viewer)], 40);
    if (own) return own;
  }
  return hint.label;
}

function cssWord(value) {
  return String(value).toLowerCase().replace(/[^a-z0-9_-]/g, "-").slice(0, 40);
}

// How a board is mirrored for the viewing seat (display hint "seat_flips": a seat sees the
// board from its own side, e.g. backgammon's black with its home board at the bottom right);
// a spectator, or a seat the hint does not name, sees it as drawn.
export function boardFlip(flips, viewer) {
  const key = String(viewer);
  const flip = Number.isInteger(viewer) && isObject(flips) && Object.hasOwn(flips, key) ? flips[key] : null;
  return { rows: flip === "rows" || flip === "both", cols: flip === "cols" || flip === "both" };
}

// A cell's hint as the viewer sees the board: its place mirrored, and what points up or down
// with it (a column's anchor, a triangle) when the rows are.
export function orientCell(hint, flip, rows, cols) {
  const out = { ...hint, row: hint.row ?? 0, col: hint.col ?? 0 };
  if (flip.cols) out.col = cols - 1 - out.col;
  if (flip.rows) {
    out.row = rows - 1 - out.row;
    if (hint.anchor) out.anchor = hint.anchor === "top" ? "bottom" : "top";
    if (hint.shape) out.shape = hint.shape === "triangle-up" ? "triangle-down" : "triangle-up";
  }
  return out;
}

function boardNode(name, cells, hints, offers, onAct) {
  const rows = Math.max(...cells.map(([, h]) => h.row ?? 0)) + 1;
  const cols = Math.max(...cells.map(([, h]) => h.col ?? 0)) + 1;
  const node = el("div", `board board-${cssWord(name)}`);
  node.dataset.board = name;
  const look = hints.board(name);
  const flip = boardFlip(look.flips, hints.viewer);
  node.dataset.flip = flip.rows && flip.cols ? "both" : flip.rows ? "rows" : flip.cols ? "cols" : "none";
  if (look.color) node.style.setProperty("--board-color", look.color);
  if (look.cell) node.style.setProperty("--cell", `${look.cell}px`);
  if (look.row) node.style.setProperty("--row", `${look.row}px`);
  node.style.setProperty("--rows", String(rows));
  node.style.setProperty("--cols", String(cols));
  for (const [space, hint] of cells) {
    node.append(spaceNode(space, orientCell(hint, flip, rows, cols), hints, offers, onAct, { onBoard: true }));
  }
  if (!look.label) return node;
  // A labelled board (e.g. a continent) is drawn under its name.
  const framed = el("figure", "board-frame");
  framed.append(el("figcaption", "board-label", look.label), node);
  return framed;
}

// ------------------------------------------------------------ seats around the table

function seatOrder(players, viewer) {
  const ids = players.map((p) => p.player_id);
  const start = Math.max(0, ids.indexOf(viewer));
  return ids.slice(start).concat(ids.slice(0, start));
}

function positions(count) {
  // The viewer (or the first seat for a spectator) sits at the bottom; the others around.
  if (count <= 1) return ["bottom"];
  if (count === 2) return ["bottom", "top"];
  if (count === 3) return ["bottom", "left", "right"];
  if (count === 4) return ["bottom", "left", "top", "right"];
  return ["bottom", ...Array(count - 1).fill("top")];
}

function scoreText(view, playerId) {
  const score = view.scores[String(playerId)];
  if (!score) return "";
  const parts = (score.public_points || []).map((value, i) => {
    const label = view.score_labels[i] || "";
    return `${label ? label + " " : ""}${value === null ? "—" : Number(value)}`;
  });
  if ((score.private_points || []).length) parts.push(`(yours: ${score.private_points.join(", ")})`);
  return parts.join(" · ");
}

function seatHeader(player, view, hints) {
  const head = el("div", "seat-head");
  const kind = hints.seatKind(player.player_id);
  if (!kind) {
    // The seat's colour, unless the game names the pieces it plays (a red dot beside the
    // player of black discs would mislead).
    const dot = el("span", "seat-dot");
    const playerColor = hints.seatColor(player.player_id);
    if (playerColor) dot.style.background = playerColor;
    head.append(dot);
  }
  head.append(el("span", "seat-name", player.username || `player ${player.player_id}`));
  if (kind) {
    // The pieces this seat plays (display hint seat_kinds), drawn small beside the name.
    const look = hints.kind(kind);
    const mark = el("span", `piece mini shape-${look.shape || "token"}`);
    mark.append(el("span", "glyph", look.glyph ?? kind));
    if (look.color) mark.style.setProperty("--piece-color", look.color);
    if (look.textColor) mark.style.setProperty("--piece-text", look.textColor);
    head.append(mark);
  }
  if (player.player_id === view.viewer) head.append(el("span", "you", "you"));
  if (!view.game_over && view.active_player_ids.includes(player.player_id)) head.append(el("span", "to-play", "to play"));
  head.append(el("span", "seat-score", scoreText(view, player.player_id)));
  const facts = hints.seatFacts
    .map((fact) => factNode(fact, player.public_state, hints.names, "fact"))
    .filter(Boolean);
  if (facts.length) {
    const line = el("div", "seat-facts");
    line.append(...facts);
    head.append(line);
  }
  return head;
}

// ------------------------------------------------------------ the whole table

export function renderTable(root, view, { onAct, predicted = false }) {
  const state = view.state;
  const hints = displayHints(state);
  const offers = offersByTarget(view.actions || []);
  const players = state.players;
  hints.names = new Map(players.map((p) => [p.player_id, p.username || `player ${p.player_id}`]));
  const seatColors = new Map(players.map((p, i) => [p.player_id, color(p.color) || SEAT_PALETTE[i % SEAT_PALETTE.length]]));
  hints.seatColor = (playerId) => seatColors.get(playerId) || null;
  hints.viewer = view.viewer;
  const bySeat = new Map(players.map((p) => [p.player_id, []]));
  const boards = new Map();
  const center = [];
  const ordered = state.spaces
    .map((space, i) => [space, hints.space(space), i])
    .sort((a, b) => (a[1].order ?? a[2]) - (b[1].order ?? b[2]));
  for (const [space, hint] of ordered) {
    const seat = hint.area === "center" ? null : hint.seat ?? space.owner;
    if (hint.board) {
      if (!boards.has(hint.board)) boards.set(hint.board, []);
      boards.get(hint.board).push([space, hint]);
    } else if (seat !== null && seat !== undefined && bySeat.has(seat)) {
      bySeat.get(seat).push([space, hint]);
    } else {
      center.push([space, hint]);
    }
  }

  const felt = el("div", "felt");
  felt.dataset.predicted = predicted ? "true" : "false";
  felt.dataset.version = String(view.version);
  const areas = {};
  for (const name of ["top", "left", "center", "right", "bottom"]) {
    areas[name] = el("div", `area area-${name}`);
    felt.append(areas[name]);
  }
  const middle = el("div", "center-stage");
  const facts = hints.tableFacts.map((fact) => factNode(fact, state.meta_data, hints.names, "fact")).filter(Boolean);
  if (facts.length) {
    // Values of the game's own state the players need (dice, pot, round), display hint "table_facts".
    const line = el("div", "table-facts");
    line.append(...facts);
    middle.append(line);
  }
  const boardRow = el("div", "boards");
  for (const [name, cells] of boards) boardRow.append(boardNode(name, cells, hints, offers, onAct));
  if (boards.size) middle.append(boardRow);
  const loose = el("div", "loose-spaces");
  for (const [space, hint] of center) loose.append(spaceNode(space, hint, hints, offers, onAct));
  if (center.length) middle.append(loose);
  areas.center.append(middle);

  const order = seatOrder(players, view.viewer);
  const where = positions(order.length);
  order.forEach((playerId, i) => {
    const player = players.find((p) => p.player_id === playerId);
    const seat = el("div", `seat seat-${where[i]}`);
    seat.dataset.playerId = String(playerId);
    if (!view.game_over && view.active_player_ids.includes(playerId)) seat.classList.add("active");
    seat.append(seatHeader(player, view, hints));
    const spaces = el("div", "seat-spaces");
    for (const [space, hint] of bySeat.get(playerId)) spaces.append(spaceNode(space, hint, hints, offers, onAct));
    seat.append(spaces);
    areas[where[i]].append(seat);
  });
  root.replaceChildren(felt);
  return hints;
}

export function renderActions(root, view, { onAct, busy }) {
  root.replaceChildren();
  const offers = (view.actions || []).filter((offer) => offer.intent !== "undo");
  if (!offers.length) return;
  root.append(el("h2", null, "Your choices"));
  const list = el("div", "action-list");
  for (const offer of offers) {
    const button = el("button", `action intent-${offer.intent}`);
    button.append(el("span", "intent", offer.intent), el("span", "label", offer.label || describe(offer.action)));
    button.dataset.key = actionKey(offer.action);
    button.disabled = busy || (offer.action.button && offer.action.button.disabled);
    button.addEventListener("click", () => onAct(offer));
    list.append(button);
  }
  root.append(list);
}

export function describe(action) {
  if (action.type === "space_click") return action.space_id;
  if (action.type === "piece_click") return `${action.space_id} #${action.index}`;
  return action.button ? action.button.label || action.button.id : "button";
}

export function renderLog(root, state) {
  root.replaceChildren(...state.log.slice(-60).map((entry) => el("li", null, entry.text)));
  root.scrollTop = root.scrollHeight;
}

export function turnText(view) {
  const names = new Map(view.state.players.map((p) => [p.player_id, p.username || `player ${p.player_id}`]));
  if (view.game_over) return "Game over";
  if (view.viewer !== null && view.active_player_ids.includes(view.viewer)) return "Your turn";
  const active = view.active_player_ids.map((id) => names.get(id) || String(id));
  return active.length ? `Waiting for ${active.join(", ")}` : "Waiting";
}

export function resultText(view) {
  if (!view.game_over) return "";
  const names = new Map(view.state.players.map((p) => [p.player_id, p.username || `player ${p.player_id}`]));
  const result = view.result;
  if (isObject(result) && Array.isArray(result.winners)) {
    // The server's result (match lifecycle): winners, and how the match ended.
    const winners = result.winners.map((id) => names.get(id) || String(id));
    const how = typeof result.ended_by === "string" ? ` (${result.ended_by.toLowerCase().replace(/_/g, " ")})` : "";
    if (!winners.length) return `Ended${how}`;
    return `${winners.length > 1 ? "Tied: " : "Winner: "}${winners.join(", ")}${how}`;
  }
  const parts = view.state.players.map((p) => `${p.username}: ${scoreText(view, p.player_id)}`);
  return `Final — ${parts.join("; ")}`;
}
