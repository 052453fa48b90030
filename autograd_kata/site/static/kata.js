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

// --- the saves -----------------------------------------------------------------
// This copy's own: keyed by the site's folder on its origin (every project site of one
// GitHub account shares one origin, each in its own folder), then by stage. The
// language is the browser's, for every copy.
const scope = new URL(".", location.href).pathname;
const keyOf = (key) => (key === "lang" ? "kata:lang" : `kata:${scope}:${key}`);
const store = {
  get(key) { try { return localStorage.getItem(keyOf(key)); } catch { return null; } },
  set(key, value) { try { localStorage.setItem(keyOf(key), value); } catch { /* private mode: this tab only */ } },
};
// Saves from before the keys named their copy: the first copy that loads takes them.
try {
  for (const key of Object.keys(localStorage)) {
    const old = /^kata:((?:src|backup):\d+|stage|progress)$/.exec(key);
    if (!old) continue;
    if (store.get(old[1]) === null) store.set(old[1], localStorage.getItem(key));
    localStorage.removeItem(key);
  }
} catch { /* no storage: nothing to take */ }

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
let pythonReady = false;  // the worker answered its start: "Ready" means this
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
    const { id, running, test, result, error } = event.data;
    const entry = pending.get(id);
    if (!entry) return;
    if (running) { if (entry.onRunning) entry.onRunning(); return; }
    if (test !== undefined) { entry.test = test; watch(id, entry, event.data.seconds); return; }  // the test it is in now
    pending.delete(id);
    clearTimeout(entry.timer);
    if (error !== undefined) entry.reject(new Error(error)); else entry.resolve(result);
  };
  worker.onerror = (event) => {  // the worker itself failed: every waiting call fails, in words
    for (const entry of pending.values()) entry.reject(new Error(event.message || "worker error"));
    pending.clear();
  };
  pythonReady = false;
  const started = call("start", [{ interrupt: shared, sources: sources(), progress: store.get("progress") || "" }]);
  started.then(() => { pythonReady = true; if (!running) settle(); }, () => {});
  return started;
}

// A new worker in place of this one (a run that never ended, or ended Python with it);
// the calls still waiting are asked again of the new one, not dropped.
function restart(except = null) {
  worker.terminate();
  if (shared) Atomics.store(new Int32Array(shared), 0, 0);  // or the new one would stop at its first line
  const waiting = [...pending.entries()].filter(([id]) => id !== except);
  for (const [, entry] of waiting) clearTimeout(entry.timer);
  pending.clear();
  status("site.restarting");
  ready = startWorker();
  for (const [id, entry] of waiting) {
    if (entry.message.method === "start") { ready.then(entry.resolve, entry.reject); continue; }  // the new start is its answer
    pending.set(id, entry);
    worker.postMessage(entry.message);
  }
  return ready;
}

function call(method, args = [], watched = false) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const entry = { resolve, reject, timer: null, message: { id, method, args } };
    if (watched) entry.onRunning = () => watch(id, entry, null);
    pending.set(id, entry);
    worker.postMessage({ id, method, args });
  });
}

// A running check's watchdog: while a test runs, its limit and the terminal's grace (the worker
// says how long: a loop in C is stopped when `kata check` stops it), else kata.watchdogMs (the
// collection, between tests, a test Python took back past its limit); never past kata.watchdogMs.
function watch(id, entry, seconds) {
  clearTimeout(entry.timer);
  entry.interrupted = false;  // Python told the page something: an interrupt, if one was sent, worked
  entry.waitMs = seconds ? Math.min(seconds * 1000, kata.watchdogMs) : kata.watchdogMs;
  entry.timer = setTimeout(() => stuck(id), entry.waitMs);
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
  // else a new worker: the page goes on, the learner's text is in the page
  pending.delete(id);
  restart(id);
  // which test, and that its time went in a call that never came back to Python; not the line
  // (docs/maintainers.md, "The page": the worker is ended from outside, its stack with it)
  const why = entry.test ? say("site.hang_in_c", { test: entry.test, seconds: Math.round(entry.waitMs / 1000) })
    : say("hang.whole_run");
  entry.resolve({ passed: false, text: `${say("hang.prefix")}${why}\n${say("site.restarted")}` });
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
// Locked (read-only, and the page says so) until Python has answered and the stage's
// text is in it: each edit is saved as the stage it shows (shownStage), never another's.
let shownStage = null;
let followed = null;  // the stage whose text this tab took from another tab, until an edit here
const editor = editorChoice.module.createEditor($("editor"), {
  label: "code",
  locked: true,
  onChange: (text) => { if (shownStage !== null) { followed = null; store.set(`src:${shownStage}`, text); } },
  onCheck: () => { if (!running && shownStage !== null) kata.check(shownStage); },  // no second run
  // Escape, then Tab, leaves the editor (Tab alone indents): #keys says it, the note too while
  // that way out is open (until another key, or the focus is back in the editor)
  onWayOut: (open) => {
    if (open) tell("site.escape_tab");
    else if (noted && noted.id === "site.escape_tab") tell();
  },
});

// Another tab of this copy saved a stage: this tab shows that text, keeps its own as a
// backup (Restore), and says so; its next keystroke builds on the other tab's work.
window.addEventListener("storage", (event) => {
  if (shownStage === null || event.key !== keyOf(`src:${shownStage}`) || event.newValue === null) return;
  const mine = editor.getText();
  if (event.newValue === mine) return;
  if (followed !== shownStage) {
    keep(shownStage, mine);
    followed = shownStage;
    show(say("site.other_tab", { n: shownStage }));
  }
  editor.setText(event.newValue);
  $("restore").disabled = Boolean(running);
});

// The box the learner types in, for the keyboard and screen readers: it names the line
// that tells how to leave it (#keys), and CodeMirror's, an editable element without a
// tabindex, gets one, so that axe (and a browser) counts its scrolling pane as reachable.
const typedIn = $("editor").querySelector(".cm-content, textarea");
typedIn.setAttribute("aria-describedby", "keys");
if (!typedIn.hasAttribute("tabindex")) typedIn.tabIndex = 0;


// --- the page -----------------------------------------------------------------
const current = () => Number($("stage").value || 1);

function show(text, passed = null) {
  const out = $("out");
  out.textContent = text;
  out.scrollTop = 0;  // a new text is read from its first line
  out.className = passed === null ? "" : passed ? "passed" : "failed";
}

// The status line by its catalogue id, so that a change of language says it again (it is
// not a data-text element: that would put "Loading" back on a page that is ready)
let statusId = "site.loading";
function status(id) { statusId = id; $("status").textContent = say(id); }
// A word about the editor under the buttons, kept by its catalogue id (and fields) so a new
// language says it again, as the status
let noted = null;
function tell(id = null, fields = {}) { noted = id && { id, fields }; $("note").textContent = id ? say(id, fields) : ""; }
function settle() { status(pythonReady ? "site.ready" : "site.restarting"); }

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
  for (const node of document.querySelectorAll("[data-label]")) node.setAttribute("aria-label", say(node.dataset.label));
  status(statusId);
  if (noted) tell(noted.id, noted.fields);
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
  shownStage = null;  // no edit is saved while the text changes stage
  editor.setLocked(true);
  const text = await getSource(stage);
  editor.setText(text);
  shownStage = Number(stage);
  followed = null;
  editor.setLocked(false);
  tell();
  $("restore").disabled = Boolean(running) || !backups(stage).length;
}

const backups = (stage) => JSON.parse(store.get(`backup:${stage}`) || "[]");
function keep(stage, text) {
  const kept = backups(stage);
  kept.push({ when: new Date().toISOString(), text });
  store.set(`backup:${stage}`, JSON.stringify(kept.slice(-20)));
}

function busy(flag) {
  for (const id of ["check", "hint", "diff", "reset", "download"]) $(id).disabled = flag;
  $("restore").disabled = flag || !backups(current()).length;
}

// One run at a time: the buttons are off during it, Ctrl+Enter starts none, and a call
// through window.kata waits for the run before it.
let running = null;
async function run(label, task) {
  while (running) await running.then(() => {}, () => {});
  busy(true);
  status(label);
  running = task();
  try { return await running; } finally { running = null; busy(false); settle(); }
}

// A run that ended with no result (the worker failed, or Python with it: a stack that
// overflowed ends Pyodide) is a failure, in words; Python is started again for the next.
function noResult(error) {
  const said = String(error && error.message || error);
  restart();
  const why = /RecursionError|call stack|stack overflow|recursion/i.test(said)
    ? say("site.recursion") : say("site.no_result", { error: said });
  return { passed: false, text: `${why}\n${say("site.restarted")}` };
}

const timings = { ready_ms: null, warm_ms: null, checks: [] };
let lastDownload = null;

const kata = {
  ready: null,
  timings,
  watchdogMs: WATCHDOG_MS,
  storeKey: keyOf,  // the localStorage key of a save ("src:1", "stage", "backup:1") in this copy
  async setSource(stage, text) {
    store.set(`src:${stage}`, text);
    if (Number(stage) === shownStage) editor.setText(text);
  },
  getSource,
  async check(stage = current()) {
    await kata.ready;
    const n = Number(stage);
    const t0 = performance.now();
    let result;
    try {
      result = await run("site.running", async () => {
        if (n === shownStage) {  // the verdict before this run is gone: it was about other code
          show(say("site.checking"));
          $("out").setAttribute("aria-busy", "true");
          editor.showLine(null);
        }
        const texts = sources();
        if (shownStage !== null) texts[shownStage] = editor.getText();  // what this tab shows is what is tested
        await call("sources", [texts]);
        return await call("check", [n, lang], true);
      });
    } catch (error) {
      result = noResult(error);
    }
    timings.checks.push({ stage: n, ms: performance.now() - t0 });
    if (n === shownStage) {
      $("out").removeAttribute("aria-busy");
      show(result.text, result.passed);
      editor.showLine(result.line || null);  // where the first failure stopped in the learner's code
      // on a phone the verdict is below the editor: brought into view after CodeMirror's scroll to
      // the marked line, which moves the window too (it runs in the next frame)
      requestAnimationFrame(() => requestAnimationFrame(() => $("out").scrollIntoView({ block: "nearest" })));
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
    if (old !== stub) keep(stage, old);
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
    show(say("site.saved", { when: new Date(last.when).toLocaleString(lang, { dateStyle: "medium", timeStyle: "short" }) }));
    return last.text;
  },
  async download() {
    await kata.ready;
    await call("sources", [sources()]);
    const data = await call("download");
    const names = await call("download_names");
    lastDownload = data;
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([data], { type: "application/zip" }));
    link.download = "exercises.zip";
    link.click();
    // the browser may save it without a word: the page says what it gave, under the buttons
    tell("site.downloaded", { file: link.download, files: names.map((name) => name.split("/").pop()).join(", ") });
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
show(say("site.locked"));
kata.ready = ready.then(async () => {
  await stageTitles();
  await open(current());
  show("");
  busy(false);
  settle();
  timings.ready_ms = performance.now() - started;
  // pytest's first imports while the learner reads, not in the first check (which waits for it)
  call("warm").then((ms) => { timings.warm_ms = ms; }, () => {});
  return true;
}).catch((error) => { status("site.no_worker"); show(String(error)); throw error; });

// Offline after a reload: sw.js (a service worker, scoped to this copy's folder) keeps this
// build's files. Only over http(s) and where the browser has them; without one the page
// works as before, online, so a failure here is not the learner's: the console has it.
kata.offline = (async () => {
  if (!("serviceWorker" in navigator) || !/^https?:$/.test(location.protocol)) return null;
  try {
    const registration = await navigator.serviceWorker.register("sw.js", { scope: "./" });
    const worker = registration.installing || registration.waiting || registration.active;
    await new Promise((resolve, reject) => {  // installed (every file in its cache), or failed
      const settled = () => {
        if (["activating", "activated"].includes(worker.state)) resolve();
        else if (worker.state === "redundant") reject(new Error("sw.js did not install"));
      };
      worker.addEventListener("statechange", settled);
      settled();
    });
    const names = (await caches.keys()).filter((name) => name.startsWith(`kata:${registration.scope}:`));
    return { scope: registration.scope, caches: names };
  } catch (error) {
    console.warn(`no offline copy: ${error}`);
    return null;
  }
})();

$("stage").addEventListener("change", () => open(current()));
$("lang").addEventListener("change", () => kata.setLang($("lang").value));
$("check").addEventListener("click", async () => {
  await kata.check();
  // the focus back on Check (a keyboard's press), where it was: not scrolled to, the verdict is
  if (document.activeElement === document.body || document.activeElement === $("check")) $("check").focus({ preventScroll: true });
});
$("hint").addEventListener("click", () => kata.hint());
$("diff").addEventListener("click", () => kata.diffPrevious());
$("reset").addEventListener("click", () => kata.reset());
$("restore").addEventListener("click", () => kata.restore());
$("download").addEventListener("click", () => kata.download());
