/**
 * The API console's request editor: CodeMirror 6 with JSON highlighting (token classes styled in
 * data.css, light and dark) and a JSON lint that marks where the text stops being JSON, with its
 * line and column. Imported by console.ts with `import()` when the console opens, so CodeMirror
 * never weighs on the first load.
 */
import { EditorState, Prec } from '@codemirror/state';
import { EditorView, drawSelection, highlightActiveLine, keymap, lineNumbers } from '@codemirror/view';
import { bracketMatching, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { json } from '@codemirror/lang-json';
import { classHighlighter } from '@lezer/highlight';
import { jsonProblem, problemText } from '../../json-check.js';

export interface JsonEditorOptions {
  text: string;
  /** The id of the element naming the editor (its label). */
  labelledBy: string;
  onChange: (text: string) => void;
  /** Ctrl+Enter (Cmd+Enter). */
  onSubmit: () => void;
}

export interface JsonEditor {
  /** Replaces the text unless it is already the editor's (edits from outside: a template, the history). */
  setText(text: string): void;
  destroy(): void;
}

/** The lint: one diagnostic where JSON.parse stops, its message naming the line and column. */
function jsonDiagnostics(view: EditorView): Diagnostic[] {
  const text = view.state.doc.toString();
  const problem = jsonProblem(text);
  if (!problem) return [];
  const from = Math.min(problem.at, text.length);
  return [{ from, to: Math.min(from + 1, text.length), severity: 'error', message: `Not JSON at ${problemText(problem)}` }];
}

export function createJsonEditor(parent: HTMLElement, options: JsonEditorOptions): JsonEditor {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.text,
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        highlightActiveLine(),
        indentOnInput(),
        bracketMatching(),
        json(),
        syntaxHighlighting(classHighlighter),
        linter(jsonDiagnostics, { delay: 250 }),
        lintGutter(),
        Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => { options.onSubmit(); return true; } }])),
        keymap.of([...defaultKeymap, ...historyKeymap]),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ 'aria-labelledby': options.labelledBy, 'aria-multiline': 'true', spellcheck: 'false' }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    setText(text) {
      if (view.state.doc.toString() === text) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    destroy() {
      view.destroy();
    },
  };
}
