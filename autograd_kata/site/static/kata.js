// The page: an editor, the stage's buttons, and a Web Worker that runs the
// kata's Python (worker.js). Every text a check, hint or diff shows comes from
// the worker, made by the same code as `kata check` / `kata hint` / `kata diff`;
// the page's own words come from site.json (the catalogue, every language).
// window.kata is the automation hook: ready, setSource, getSource, check, hint, setLang.
const started = performance.now();
const site = await (await fetch("site.json")).json();
const $ = (id) => document.getElementById(id);
// A check that runs this long has a loop the time limits cannot see (in C: no Python
// event to stop it at): the page stops it from here (kata.watchdogMs changes it).
const WATCHDOG_MS = 60000;

const store = {
  get(key) { try { return localStorage.getItem(`kata:${key}`); } catch { return null; } },
  set(key, value) { try { localStorage.setItem(`kata:${key}`, value); } catch { /* private mode: this tab only */ } },
};

function pickLanguage() {
  const saved = store.get("lang");
  if (saved && site.languages.includes(saved)) return saved;
  for (const wanted of navigator.languages || [navigator.language || "en"]) {
    const code = String(wanted).toLowerCase().split(/[-_]/)[0];
    if (site.languages.includes(code)) return code;
  }
  return site.languages[0];
}

let lang = pickLanguage();
const say = (id, fields = {}) => String(site.text[lang][id] ?? site.text.en[id] ?? id)
  .replace(/\{(\w+)\}/g, (whole, key) => (key in fields ? String(fields[key]) : whole));

// --- the worker ---------------------------------------------------------------
let worker = null;
let nextId = 1;
const pending = new Map();
const shared = self.crossOriginIsolated ? new SharedArrayBuffer(4) : null;

function sources() {
  const found = {};
  for (const s of site.stages) {
    const text = store.get(`src:${s.number}`);
    if (text !== null) found[s.number] = text;
  }
  return found;
}

function startWorker() {
  worker = new Worker("worker.js", { type: "module" });
  worker.onmessage = (event) => {
    const { id, running, result, error } = event.data;
    const entry = pending.get(id);
    if (!entry) return;
    if (running) { if (entry.onRunning) entry.onRunning(); return; }
    pending.delete(id);
    clearTimeout(entry.timer);
    if (error !== undefined) entry.reject(new Error(error)); else entry.resolve(result);
  };
  worker.onerror = (event) => {
    for (const entry of pending.values()) entry.reject(new Error(event.message || "worker error"));
    pending.clear();
  };
  return call("start", [{ interrupt: shared, sources: sources(), progress: store.get("progress") || "" }]);
}

function call(method, args = [], watched = false) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const entry = { resolve, reject, timer: null };
    if (watched) entry.onRunning = () => { entry.timer = setTimeout(() => stuck(id), kata.watchdogMs); };
    pending.set(id, entry);
    worker.postMessage({ id, method, args });
  });
}

function stuck(id) {
  const entry = pending.get(id);
  if (!entry) return;
  if (shared && !entry.interrupted) {  // Pyodide's interrupt buffer: a KeyboardInterrupt, even in C
    entry.interrupted = true;
    Atomics.store(new Int32Array(shared), 0, 2);
    entry.timer = setTimeout(() => stuck(id), 5000);
    return;
  }
  worker.terminate();  // else a new worker: the page goes on, the learner's text is in the page
  if (shared) Atomics.store(new Int32Array(shared), 0, 0);  // or the new one would stop at its first line
  pending.delete(id);
  for (const other of pending.values()) other.reject(new Error("restarted"));
  pending.clear();
  entry.resolve({ passed: false, text: `${say("hang.prefix")}${say("hang.whole_run")}\n${say("site.restarted")}` });
  ready = startWorker();
}

// --- the editor ---------------------------------------------------------------
// CodeMirror (editor.mjs, when the site was built with it), else a plain text box
// (plain.js): one API, so every path below (setSource, Reset, Restore, the saved
// text, Download, a check's line) goes through the editor the learner types in.
async function loadEditor() {
  if (site.editor) {
    try { return { module: await import(`./${site.editor.file}`), name: site.editor.name }; }
    catch (error) { console.error(`${site.editor.file}: ${error}`); }  // the page still works, in the text box
  }
  return { module: await import("./plain.js"), name: null };
}
const editorChoice = await loadEditor();
const editor = editorChoice.module.createEditor($("editor"), {
  label: "code",
  onChange: (text) => store.set(`src:${current()}`, text),
  onCheck: () => kata.check(current()),
});

// --- the page -----------------------------------------------------------------
const current = () => Number($("stage").value || 1);

function show(text, passed = null) {
  const out = $("out");
  out.textContent = text;
  out.className = passed === null ? "" : passed ? "passed" : "failed";
}

function status(text) { $("status").textContent = text; }

async function stageTitles() {
  const rows = JSON.parse(await call("stages", [lang]));
  const select = $("stage");
  const chosen = select.value || store.get("stage") || "1";
  select.innerHTML = "";
  for (const row of rows) {
    const option = document.createElement("option");
    option.value = row.number;
    option.textContent = `${row.number} · ${row.title}`;
    select.append(option);
  }
  select.value = chosen;
}

function words() {
  document.documentElement.lang = lang;
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = say(node.dataset.text);
  document.title = say("site.title");
  $("explore").href = `explore.${lang}.html`;
  $("versions").textContent = say("site.versions", { pyodide: site.pyodide, python: site.python,
    kata: site.kata, packages: site.packages.join(", "), editor: editorChoice.name || say("site.plain_editor") });
  const select = $("lang");
  if (!select.options.length) {
    for (const code of site.languages) {
      const option = document.createElement("option");
      option.value = code;
      option.textContent = code === "ja" ? "日本語" : code === "en" ? "English" : code;
      select.append(option);
    }
  }
  select.value = lang;
}

async function getSource(stage) {
  const saved = store.get(`src:${stage}`);
  if (saved !== null) return saved;
  await ready;
  return call("get_source", [Number(stage)]);
}

async function open(stage) {
  store.set("stage", String(stage));
  editor.setText(await getSource(stage));
  $("restore").disabled = !backups(stage).length;
}

const backups = (stage) => JSON.parse(store.get(`backup:${stage}`) || "[]");

function busy(flag) {
  for (const id of ["check", "hint", "diff", "reset", "download"]) $(id).disabled = flag;
  $("restore").disabled = flag || !backups(current()).length;
}

async function run(label, task) {
  busy(true);
  status(say(label));
  try { return await task(); } finally { busy(false); status(say("site.ready")); }
}

const timings = { ready_ms: null, checks: [] };
let lastDownload = null;

const kata = {
  ready: null,
  timings,
  watchdogMs: WATCHDOG_MS,
  async setSource(stage, text) {
    store.set(`src:${stage}`, text);
    if (Number(stage) === current()) editor.setText(text);
  },
  getSource,
  async check(stage = current()) {
    await kata.ready;
    const t0 = performance.now();
    const result = await run("site.running", async () => {
      await call("sources", [sources()]);
      return call("check", [Number(stage), lang], true);
    });
    timings.checks.push({ stage: Number(stage), ms: performance.now() - t0 });
    if (Number(stage) === current()) {
      show(result.text, result.passed);
      editor.showLine(result.line || null);  // where the first failure stopped in the learner's code
    }
    return { passed: Boolean(result.passed), text: result.text, line: result.line ?? null };
  },
  async hint(stage = current()) {
    await kata.ready;
    const result = await run("site.running", () => call("hint", [Number(stage), lang]));
    store.set("progress", result.progress);
    show(result.text);
    return result.text;
  },
  async diffPrevious(stage = current()) {
    await kata.ready;
    const text = await run("site.running", () => call("diff_previous", [Number(stage), lang]));
    show(text);
    return text;
  },
  async reset(stage = current()) {
    await kata.ready;
    const stub = await call("stub", [Number(stage)]);
    const old = await getSource(stage);
    if (old !== stub) {
      const kept = backups(stage);
      kept.push({ when: new Date().toISOString(), text: old });
      store.set(`backup:${stage}`, JSON.stringify(kept.slice(-20)));
    }
    await kata.setSource(stage, stub);
    show(say("site.reset_done", { n: stage }));
    $("restore").disabled = !backups(current()).length;
    return stub;
  },
  async restore(stage = current()) {
    const kept = backups(stage);
    if (!kept.length) { show(say("site.no_backup", { n: stage })); return null; }
    const last = kept[kept.length - 1];
    kept[kept.length - 1] = { when: new Date().toISOString(), text: await getSource(stage) };  // a swap: nothing is lost
    store.set(`backup:${stage}`, JSON.stringify(kept));
    await kata.setSource(stage, last.text);
    show(say("site.saved", { when: last.when }));
    return last.text;
  },
  async download() {
    await kata.ready;
    await call("sources", [sources()]);
    const data = await call("download");
    lastDownload = data;
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([data], { type: "application/zip" }));
    link.download = "exercises.zip";
    link.click();
    return data.length;
  },
  async setLang(code) {
    if (!site.languages.includes(code)) throw new Error(`no language ${code}: ${site.languages.join(", ")}`);
    lang = code;
    store.set("lang", code);
    words();
    await kata.ready;
    await stageTitles();
    return lang;
  },
  language: () => lang,
  editor: () => editor.kind,  // "codemirror", or "plain" (the text box of a site built without the bundle)
  shown: () => editor.getText(),  // what the editor shows now
  lastDownload: () => (lastDownload ? Array.from(lastDownload) : null),
};
window.kata = kata;

words();
let ready = startWorker();
kata.ready = ready.then(async () => {
  await stageTitles();
  await open(current());
  busy(false);
  status(say("site.ready"));
  timings.ready_ms = performance.now() - started;
  return true;
}).catch((error) => { status(say("site.no_worker")); show(String(error)); throw error; });

$("stage").addEventListener("change", () => open(current()));
$("lang").addEventListener("change", () => kata.setLang($("lang").value));
$("check").addEventListener("click", () => kata.check());
$("hint").addEventListener("click", () => kata.hint());
$("diff").addEventListener("click", () => kata.diffPrevious());
$("reset").addEventListener("click", () => kata.reset());
$("restore").addEventListener("click", () => kata.restore());
$("download").addEventListener("click", () => kata.download());
