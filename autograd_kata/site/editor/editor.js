// The page's editor (kata.js imports the bundle that `kata site --fetch` builds from
// this file): CodeMirror 6 with Python mode and line numbers. The same small API as
// the plain text box the page falls back to without the bundle (static/plain.js):
//   createEditor(parent, {text, onChange, onCheck, label, locked, onWayOut}) ->
//     {getText(), setText(text), showLine(n), setLocked(flag), focus(), kind}
// Locked, the editor takes no edit (the page locks it until Python knows the stage).
// Enter inserts a new line unless the learner picked a completion (ArrowDown or
// ArrowUp, then Enter); Tab takes the first completion shown (or indents); Escape, then Tab,
// leaves the editor (onWayOut(true) at the Escape, onWayOut(false) when that way out ends).
// Highlighting gives stable classes (tok-keyword, tok-string, ...: @lezer/highlight's
// classHighlighter), which style.css colours as the rest of the page.
import { acceptCompletion, autocompletion, completionStatus, moveCompletionSelection, selectedCompletionIndex }
  from "@codemirror/autocomplete";
import { indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { indentUnit, syntaxHighlighting } from "@codemirror/language";
import { Annotation, Compartment, EditorState, Prec, StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView, MatchDecorator, ViewPlugin, keymap } from "@codemirror/view";
import { classHighlighter } from "@lezer/highlight";
import { basicSetup } from "codemirror";

export const kind = "codemirror";
const fromPage = Annotation.define();  // a change the page made (setText): no onChange for it

// The line the last check points at (a hang's, a crash's): marked until the next edit.
const pointAt = StateEffect.define();
const pointed = StateField.define({
  create: () => Decoration.none,
  update(marks, tr) {
    if (tr.docChanged) return Decoration.none;
    for (const effect of tr.effects) {
      if (effect.is(pointAt)) {
        marks = effect.value === null ? Decoration.none
          : Decoration.set([Decoration.line({ class: "cm-kata-line" }).range(effect.value)]);
      }
    }
    return marks;
  },
  provide: (field) => EditorView.decorations.from(field),
});

// What the learner still has to write: every NotImplementedError stands out.
const todo = new MatchDecorator({ regexp: /\bNotImplementedError\b/g, decoration: Decoration.mark({ class: "cm-kata-todo" }) });
const todos = ViewPlugin.define((view) => ({
  marks: todo.createDeco(view),
  update(update) { this.marks = todo.updateDeco(update, this.marks); },
}), { decorations: (plugin) => plugin.marks });

// Tab with a completion list open takes its first (or the picked) entry.
function tabPicks(view) {
  if (completionStatus(view.state) !== "active") return false;
  if (selectedCompletionIndex(view.state) === null && !moveCompletionSelection(true)(view)) return false;
  return acceptCompletion(view);
}

const MODIFIERS = new Set(["Shift", "Control", "Alt", "Meta", "CapsLock", "AltGraph"]);

const lockedAs = (flag) => [EditorState.readOnly.of(flag), EditorView.contentAttributes.of({ "aria-readonly": String(flag) })];

export function createEditor(parent, { text = "", onChange = () => {}, onCheck = () => {}, label = "code",
  locked = false, onWayOut = () => {} } = {}) {
  const lock = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        basicSetup,
        python(),
        autocompletion({ selectOnOpen: false }),  // nothing picked until the learner picks: Enter is a new line
        EditorView.lineWrapping,
        lock.of(lockedAs(locked)),
        indentUnit.of("    "),
        syntaxHighlighting(classHighlighter),
        Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => { onCheck(); return true; } }, { key: "Tab", run: tabPicks },
          indentWithTab])),
        EditorView.contentAttributes.of({ "aria-label": label, spellcheck: "false", autocapitalize: "off" }),
        pointed,
        todos,
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !update.transactions.some((tr) => tr.annotation(fromPage))) {
            onChange(update.state.doc.toString());
          }
        }),
      ],
    }),
  });
  // Escape, then Tab, leaves the editor however long the learner took to read the note (the
  // page's #note, told by onWayOut): tab-focus mode on until the next key that is not Tab (nor a modifier held for
  // Shift+Tab), or until the focus is back in the editor. CodeMirror's own way out ends after 2 s.
  let wayOut = false;
  const out = (open) => { wayOut = open; view.setTabFocusMode(open); onWayOut(open); };
  view.contentDOM.addEventListener("keydown", (event) => {
    if (event.key === "Escape") out(true);
    else if (wayOut && event.key !== "Tab" && !MODIFIERS.has(event.key)) out(false);
  });
  view.contentDOM.addEventListener("focus", () => { if (wayOut) out(false); });
  return {
    kind,
    view,
    getText: () => view.state.doc.toString(),
    setText(value) {
      if (value === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value }, annotations: fromPage.of(true) });
    },
    showLine(number) {
      if (!number || number < 1 || number > view.state.doc.lines) {
        view.dispatch({ effects: pointAt.of(null) });
        return;
      }
      const line = view.state.doc.line(number);
      view.dispatch({ effects: [pointAt.of(line.from), EditorView.scrollIntoView(line.from, { y: "center" })],
        selection: { anchor: line.from } });
    },
    setLocked(flag) { view.dispatch({ effects: lock.reconfigure(lockedAs(flag)) }); },
    focus: () => view.focus(),
  };
}
