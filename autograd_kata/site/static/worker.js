// The page's Python: Pyodide in this Web Worker, the learner's kata in /kata.
// Every message is {id, method, args}; every answer {id, result} or {id, error}.
// A check first answers {id, running: true}, so the page can time it, then {id, test: name,
// seconds} as each test starts (site/limits.py's ON_TEST: how long it may take), and as it ends.
import { loadPyodide } from "./pyodide/pyodide.mjs";

let api = null;
let interrupt = null;

async function bytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function start(init) {
  // the files come while Python starts
  const site = fetch("site.json").then((response) => response.json());
  const wheelData = site.then((info) => Promise.all(info.wheels.map((name) => bytes(`wheels/${name}`))));
  const kataData = bytes("kata.zip");
  const py = await loadPyodide({ indexURL: new URL("./pyodide/", import.meta.url).href });
  if (init.interrupt) {  // cross-origin isolated: the page can stop a loop in C too
    interrupt = new Int32Array(init.interrupt);
    Atomics.store(interrupt, 0, 0);  // an interrupt meant for the worker this one replaces
    py.setInterruptBuffer(interrupt);
  }
  const sitePackages = py.runPython("import site; site.getsitepackages()[0]");
  (await wheelData).forEach((data) => py.unpackArchive(data, "wheel", { extractDir: sitePackages }));
  py.unpackArchive(await kataData, "zip", { extractDir: "/kata" });
  py.runPython("import sys; sys.path.insert(0, '/kata')");
  api = py.pyimport("autograd_kata.site.inpage");
  api.prepare("/kata");
  for (const [stage, text] of Object.entries(init.sources || {})) api.put_source(Number(stage), text);
  if (init.progress) api.put_progress(init.progress);
  return py;
}

let ready = null;
const plain = (value) => (value && typeof value.toJs === "function"
  ? value.toJs({ dict_converter: Object.fromEntries }) : value);

self.onmessage = async (event) => {
  const { id, method, args = [] } = event.data;
  try {
    if (method === "start") {
      ready = start(args[0] || {});
      await ready;
      postMessage({ id, result: true });
      return;
    }
    await ready;
    if (interrupt) Atomics.store(interrupt, 0, 0);
    if (method === "check") postMessage({ id, running: true });
    let result;
    if (method === "sources") {
      for (const [stage, text] of Object.entries(args[0])) api.put_source(Number(stage), text);
      result = true;
    } else if (method === "check") {  // each test's name as it starts: a loop in C is named by its test
      result = plain(api.check(...args, (name, seconds) => postMessage({ id, test: name ?? null, seconds: seconds ?? null })));
    } else if (method === "hint") {
      result = { text: api.hint(...args), progress: api.progress() };
    } else {
      result = plain(api[method](...args));
    }
    postMessage({ id, result });
  } catch (error) {
    postMessage({ id, error: String(error && error.message || error) });
  }
};
