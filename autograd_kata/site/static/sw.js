// The page offline after a reload: this service worker keeps the files of one build of
// the site (the page, its JS and CSS, the editor, Pyodide's runtime, the wheels, the
// learner's kata) in the browser's cache, and answers from there when the network does not.
// Online, every file still comes from the server (the cache is the fallback, never a
// stale copy in front of a new build). `kata site` writes BUILD (a hash of every file it
// wrote but this one) and FILES (their paths) below: a new build is a new sw.js, so the
// browser installs it, fills a new cache and deletes the old one.
// The scope is the folder this file is in: two copies of the site on one origin (every
// project site of a GitHub account shares one) have two workers and two caches, each
// named by its folder, and neither answers for the other's files.
const BUILD = "__KATA_BUILD__";
const FILES = ["__KATA_FILES__"];
// the colon ends the scope: a copy in a folder of this one (/k/inner/ in /k/) has caches this
// worker's PREFIX does not match, so a new build here deletes none of them
const PREFIX = `kata:${self.registration.scope}:`;
const CACHE = PREFIX + BUILD;
const KEPT = new Set(FILES.map((path) => new URL(path, self.registration.scope).href));

self.addEventListener("install", (event) => {
  // every file or none: a cache that misses one would fail offline halfway through a start
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((name) => name.startsWith(PREFIX) && name !== CACHE)
      .map((name) => caches.delete(name))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  url.hash = "";
  if (event.request.method !== "GET" || !KEPT.has(url.href)) return;  // not this build's file: the network's
  event.respondWith(fetch(event.request).catch(async (error) => {
    const kept = await caches.open(CACHE).then((cache) => cache.match(url.href));
    if (kept) return kept;
    throw error;
  }));
});
