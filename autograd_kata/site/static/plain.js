// The page's editor when the site was built without the CodeMirror bundle (kata site
// without --fetch or --codemirror): a text box over a painted copy of its text, with a
// small Python highlighter. The same API as the bundle's (autograd_kata/site/editor/editor.js):
//   createEditor(parent, {text, onChange, onCheck, label, locked, onWayOut})
//     -> {getText(), setText(text), showLine(n), setLocked(flag), focus(), kind}
export const kind = "plain";

const KEYWORDS = new Set(("and as assert async await break class continue def del elif else except finally for from "
  + "global if import in is lambda nonlocal not or pass raise return try while with yield None True False self").split(" "));
const TOKEN = /(#[^\n]*)|("""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|[rbfu]*"(?:\\.|[^"\\\n])*"?|[rbfu]*'(?:\\.|[^'\\\n])*'?)|\b(\d[\d_]*\.?\d*(?:[eE][-+]?\d+)?)\b|([A-Za-z_]\w*)/g;
const MODIFIERS = new Set(["Shift", "Control", "Alt", "Meta", "CapsLock", "AltGraph"]);
const escape = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

// Each line of the painted copy starts with an empty <i class="row">: where a line is, once
// long lines wrap (the box and the copy wrap alike: style.css), for the marked line.
const ROW = '<i class="row"></i>';

function highlight(text) {
  let html = "";
  let last = 0;
  let afterDef = false;
  for (const match of text.matchAll(TOKEN)) {
    html += escape(text.slice(last, match.index));
    last = match.index + match[0].length;
    const [word, comment, string, number, name] = match;
    let cls = "";
    if (comment) cls = "tok-comment";
    else if (string) cls = "tok-string";
    else if (number) cls = "tok-number";
    else if (name && afterDef) cls = "tok-definition";
    else if (name === "NotImplementedError") cls = "cm-kata-todo";
    else if (name && KEYWORDS.has(name)) cls = "tok-keyword";
    afterDef = name === "def" || name === "class";
    html += cls ? `<span class="${cls}">${escape(word)}</span>` : escape(word);
  }
  return `${ROW}${`${html}${escape(text.slice(last))}\n`.replace(/\n/g, `\n${ROW}`)}`;
}

export function createEditor(parent, { text = "", onChange = () => {}, onCheck = () => {}, label = "code",
  locked = false, onWayOut = () => {} } = {}) {
  parent.classList.add("plain");
  // the marked line first, so that the painted text and the box stand above it
  parent.innerHTML = '<div class="mark" hidden></div><pre class="paint" aria-hidden="true"></pre>'
    + '<textarea spellcheck="false" autocapitalize="off" autocomplete="off" wrap="soft"></textarea>';
  const [mark, paintLayer, code] = parent.children;
  code.setAttribute("aria-label", label);
  code.value = text;
  code.readOnly = locked;

  function paint() {
    paintLayer.innerHTML = highlight(code.value);
    code.style.height = "auto";
    code.style.height = `${Math.max(code.scrollHeight, parent.clientHeight)}px`;
  }
  code.addEventListener("input", () => { mark.hidden = true; onChange(code.value); paint(); });
  // Escape, then Tab: the focus leaves the box (Tab alone indents), as in CodeMirror: the next
  // Tab after an Escape, until another key (not a modifier) or the focus is back in the box
  let escaped = false;
  const out = (open) => { if (open || escaped) onWayOut(open); escaped = open; };
  code.addEventListener("focus", () => out(false));
  code.addEventListener("keydown", (event) => {
    const leaving = escaped;
    if (event.key === "Escape") out(true);
    else if (event.key !== "Tab" && !MODIFIERS.has(event.key)) out(false);
    if (event.key === "Tab" && !event.shiftKey && !leaving) {
      event.preventDefault();
      code.setRangeText("    ", code.selectionStart, code.selectionEnd, "end");
      code.dispatchEvent(new Event("input"));
    } else if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      onCheck();
    }
  });
  window.addEventListener("resize", paint);
  paint();
  return {
    kind,
    getText: () => code.value,
    setText(value) { code.value = value; mark.hidden = true; paint(); },
    showLine(number) {
      const lines = code.value.split("\n").length;
      mark.hidden = !number || number < 1 || number > lines;
      if (mark.hidden) return;
      // from this line's row to the next one's: every row a wrapped line takes
      const rows = paintLayer.querySelectorAll("i.row");
      const [row, next] = [rows[number - 1], rows[number]];
      const leading = (parseFloat(getComputedStyle(code).lineHeight) - row.offsetHeight) / 2;
      const top = paintLayer.offsetTop + row.offsetTop - leading;
      mark.style.top = `${top}px`;
      mark.style.height = `${next.offsetTop - row.offsetTop}px`;
      parent.scrollTop = Math.max(0, top - parent.clientHeight / 2);
    },
    setLocked(flag) { code.readOnly = flag; },
    focus: () => code.focus(),
  };
}
