// Rules in the browser: run the match's own module on this viewer's view to predict a move
// (docs/abi.md, "Running the rules on a view"). A prediction is shown at once and replaced by
// the server's answer; a move that draws randomness, a click on hidden pieces (the server picks
// one at random) and anything that fails are never predicted.

const STEP = 3;
const PREDICTION_TIMEOUT_MS = 1000;
const PREDICTION_SEED = 0; // any seed: a step that draws from it is thrown away

// The view as an ABI state: hidden groups become that many pieces with no private part;
// log lines are already this viewer's own.
export function stateOfView(viewState) {
  const piece = (p) => ({
    public_kind: p.public_kind,
    public_state: p.public_state || {},
    owner: p.owner ?? null,
    private_kind: p.private_kind ?? null,
    private_state: p.private_state || {},
  });
  return {
    active_player_ids: viewState.active_player_ids,
    players: viewState.players,
    spaces: viewState.spaces.map((space) => ({
      ...space,
      pieces: space.pieces.flatMap((p) =>
        Number.isInteger(p.count)
          ? Array.from({ length: p.count }, () => ({ ...piece(p), private_kind: null, private_state: {} }))
          : [piece(p)],
      ),
    })),
    meta_data: viewState.meta_data,
    log: viewState.log.map((entry) => ({ text: entry.text, for_player: {} })),
  };
}

function sortedJson(value) {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${sortedJson(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

// The state as `viewer` sees it, as the host's view_state builds it (tablehost/view.py).
export function viewOfState(state, viewer) {
  const seen = (piece, space) => (piece.owner ?? space.owner) === viewer && viewer !== null;
  const publicPart = (p) => ({ public_kind: p.public_kind, public_state: p.public_state, owner: p.owner ?? null });
  return {
    active_player_ids: state.active_player_ids,
    players: state.players.map((p) => ({ ...p, private_state: p.player_id === viewer ? p.private_state : {} })),
    spaces: state.spaces.map((space) => {
      let pieces;
      if (space.arrangement === "collection") {
        const groups = new Map();
        pieces = [];
        for (const p of space.pieces) {
          if (seen(p, space)) pieces.push(p);
          else {
            const key = sortedJson(publicPart(p));
            if (!groups.has(key)) groups.set(key, { ...publicPart(p), count: 0 });
            groups.get(key).count += 1;
          }
        }
        pieces.push(...[...groups.keys()].sort().map((key) => groups.get(key)));
      } else {
        pieces = space.pieces.map((p) => (seen(p, space) ? p : publicPart(p)));
      }
      return { ...space, private_state: space.owner === viewer ? space.private_state : {}, pieces };
    }),
    meta_data: state.meta_data,
    log: state.log.map((entry) => ({ text: (entry.for_player || {})[String(viewer)] ?? entry.text })),
  };
}

// A click on a group of hidden pieces: the server picks one at random, so it is not predicted.
function clicksHiddenGroup(viewState, action) {
  if (action.type !== "piece_click") return false;
  const space = viewState.spaces.find((s) => s.space_id === action.space_id);
  const piece = space && space.pieces[action.index];
  return !piece || Number.isInteger(piece.count);
}

// Scores as the host shows them: private points only for the viewer.
function ownScores(scores, viewer) {
  const shown = {};
  for (const [key, score] of Object.entries(scores || {})) {
    shown[key] = { public_points: score.public_points || [], private_points: key === String(viewer) ? score.private_points || [] : [] };
  }
  return shown;
}

export class Rules {
  constructor(loadBytes) {
    this.loadBytes = loadBytes; // () => Promise<ArrayBuffer>, the match's module
    this.worker = null;
    this.ready = null;
    this.nextId = 1;
    this.waiting = new Map();
  }

  start() {
    this.worker = new Worker("/static/rules-worker.js");
    this.worker.onmessage = (event) => {
      const resolve = this.waiting.get(event.data.id);
      this.waiting.delete(event.data.id);
      if (resolve) resolve(event.data);
    };
    this.ready = this.loadBytes().then((bytes) => this.send({ type: "load", bytes }, [bytes]));
    this.ready.catch(() => {});
    return this.ready;
  }

  send(message, transfer = [], timeoutMs = 10000) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        this.restart();
        reject(new Error("the rules took too long"));
      }, timeoutMs);
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.ok) resolve(answer);
        else reject(new Error(answer.error));
      });
      this.worker.postMessage({ ...message, id }, transfer);
    });
  }

  restart() {
    if (this.worker) this.worker.terminate();
    this.waiting.clear();
    this.start();
  }

  // The predicted view after `offer` by `view.viewer`, or null when the move is not predicted.
  async predict(view, offer) {
    const action = offer.action;
    if (offer.intent === "undo" || view.viewer === null || view.game_over) return null;
    if (!view.active_player_ids.includes(view.viewer) || clicksHiddenGroup(view.state, action)) return null;
    try {
      await this.ready;
      const answer = await this.send(
        {
          type: "call",
          op: STEP,
          request: {
            state: stateOfView(view.state),
            next_ref: "prediction",
            player_id: view.viewer,
            action,
            seed: PREDICTION_SEED,
            want_state: true,
          },
        },
        [],
        PREDICTION_TIMEOUT_MS,
      );
      const response = answer.response;
      if (!response || response.error || response.rng_used || !response.state) return null;
      return {
        ...view,
        version: view.version + 1,
        state: viewOfState(response.state, view.viewer),
        actions: [],
        scores: ownScores(response.scores || view.scores, view.viewer),
        active_player_ids: response.state.active_player_ids,
        game_over: Boolean(response.game_over),
        predicted: true,
      };
    } catch {
      return null;
    }
  }
}
