// Tokens and the API: a token comes in the URL fragment (never sent to the server, so never
// in a request line or a log), is kept in this tab's sessionStorage, and leaves the address
// bar at once. Requests carry it in the Authorization header only.

export function takeFragment(storageKey) {
  const params = new URLSearchParams(location.hash.slice(1));
  if ([...params.keys()].length) {
    const saved = Object.fromEntries(params.entries());
    sessionStorage.setItem(storageKey, JSON.stringify(saved));
    history.replaceState(null, "", location.pathname + location.search);
  }
  try {
    return JSON.parse(sessionStorage.getItem(storageKey) || "{}");
  } catch {
    return {};
  }
}

export function remember(storageKey, values) {
  sessionStorage.setItem(storageKey, JSON.stringify(values));
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export class Api {
  constructor(token) {
    this.token = token;
  }

  headers(extra = {}) {
    return { authorization: `Bearer ${this.token}`, ...extra };
  }

  async request(method, path, body) {
    const init = { method, headers: this.headers(), cache: "no-store" };
    if (body instanceof ArrayBuffer || body instanceof Blob) {
      init.body = body;
      init.headers["content-type"] = "application/wasm";
    } else if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers["content-type"] = "application/json";
    }
    const response = await fetch(path, init);
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!response.ok) {
      const error = (data && data.error) || { code: `http/${response.status}`, message: text || response.statusText };
      throw new ApiError(response.status, error.code, error.message);
    }
    return data;
  }

  get(path) {
    return this.request("GET", path);
  }

  post(path, body) {
    return this.request("POST", path, body);
  }

  async bytes(path) {
    const response = await fetch(path, { headers: this.headers() });
    if (!response.ok) throw new ApiError(response.status, `http/${response.status}`, response.statusText);
    return response.arrayBuffer();
  }

  // Server-Sent Events read with fetch (EventSource cannot send an Authorization header).
  // Calls onEvent(name, data) per event; resolves when the stream ends; abort() stops it.
  async events(path, onEvent, signal) {
    const response = await fetch(path, { headers: this.headers(), signal, cache: "no-store" });
    if (!response.ok) throw new ApiError(response.status, `http/${response.status}`, response.statusText);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
        }
        if (data.length) onEvent(name, JSON.parse(data.join("\n")));
      }
    }
  }
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
