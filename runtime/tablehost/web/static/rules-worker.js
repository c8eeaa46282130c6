// Runs the match's module (ABI v1) in this worker: the page's thread never blocks on the rules,
// and a prediction that runs away is ended by terminating the worker.
"use strict";

let compiled = null;
let instance = null;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function fresh() {
  instance = await WebAssembly.instantiate(compiled, {});
}

function call(op, request) {
  const exports = instance.exports;
  const bytes = encoder.encode(JSON.stringify(request));
  const ptr = exports.tablehost_alloc(bytes.length);
  if (!ptr) throw new Error("tablehost_alloc failed");
  new Uint8Array(exports.memory.buffer, ptr, bytes.length).set(bytes);
  const packed = BigInt.asUintN(64, exports.tablehost_call(op, ptr, bytes.length));
  const outPtr = Number(packed >> 32n);
  const outLen = Number(packed & 0xffffffffn);
  // The response stays valid until the next export call, so it is read before the dealloc.
  const text = decoder.decode(new Uint8Array(exports.memory.buffer, outPtr, outLen).slice());
  exports.tablehost_dealloc(ptr, bytes.length);
  return JSON.parse(text);
}

self.onmessage = async (event) => {
  const { id, type } = event.data;
  try {
    if (type === "load") {
      compiled = await WebAssembly.compile(event.data.bytes);
      const names = WebAssembly.Module.exports(compiled).map((e) => e.name);
      if (!names.includes("tablehost_abi_v1") || WebAssembly.Module.imports(compiled).length) {
        throw new Error("not a tablehost ABI v1 module");
      }
      await fresh();
      self.postMessage({ id, ok: true });
    } else if (type === "call") {
      const response = call(event.data.op, event.data.request);
      self.postMessage({ id, ok: true, response });
    }
  } catch (error) {
    // A trap leaves the instance in an unknown state: the next call gets a fresh one.
    if (compiled) await fresh().catch(() => {});
    self.postMessage({ id, ok: false, error: String(error) });
  }
};
