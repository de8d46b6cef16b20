// A code editor (CodeMirror 6) for world programs and JSON: line numbers,
// highlighting, and one line marked when the backend names it in an error.
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { python } from '@codemirror/lang-python';
import { HighlightStyle, bracketMatching, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { Compartment, EditorState, RangeSetBuilder, StateEffect, StateField } from '@codemirror/state';
import { Decoration, type DecorationSet, EditorView, GutterMarker, gutterLineClass, keymap, lineNumbers } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import { useEffect, useRef } from 'react';

interface CodeEditorProps {
  value: string;
  onChange: (value: string) => void;
  language: 'python' | 'json';
  /** A 1-based line to mark as the error's line. */
  errorLine?: number | undefined;
  label: string;
  minHeight?: number;
}

const highlight = HighlightStyle.define([
  { tag: t.keyword, color: 'var(--code-keyword)', fontWeight: '600' },
  { tag: [t.string, t.special(t.string)], color: 'var(--code-string)' },
  { tag: [t.number, t.bool, t.null], color: 'var(--code-number)' },
  { tag: t.comment, color: 'var(--text-3)', fontStyle: 'italic' },
  { tag: [t.function(t.variableName), t.definition(t.variableName)], color: 'var(--code-def)' },
  { tag: t.propertyName, color: 'var(--code-def)' },
]);

const setErrorLine = StateEffect.define<number | undefined>();

class ErrorGutter extends GutterMarker {
  override elementClass = 'cm-error-gutter';
}
const errorGutter = new ErrorGutter();

const errorField = StateField.define<{ line?: number | undefined; deco: DecorationSet }>({
  create: () => ({ deco: Decoration.none }),
  update(v, tr) {
    let line = v.line;
    for (const e of tr.effects) if (e.is(setErrorLine)) line = e.value;
    // Any edit clears the mark: the error was about the text as it was.
    if (tr.docChanged) line = undefined;
    if (line === v.line && !tr.docChanged) return v;
    if (line === undefined || line < 1 || line > tr.state.doc.lines) return { deco: Decoration.none };
    const l = tr.state.doc.line(line);
    const b = new RangeSetBuilder<Decoration>();
    b.add(l.from, l.from, Decoration.line({ class: 'cm-error-line', attributes: { 'data-error-line': String(line) } }));
    return { line, deco: b.finish() };
  },
  provide: (f) => [
    EditorView.decorations.from(f, (v) => v.deco),
    gutterLineClass.compute([f], (state) => {
      const line = state.field(f).line;
      if (line === undefined || line > state.doc.lines) return new RangeSetBuilder<GutterMarker>().finish();
      const b = new RangeSetBuilder<GutterMarker>();
      const l = state.doc.line(line);
      b.add(l.from, l.from, errorGutter);
      return b.finish();
    }),
  ],
});

/** CodeEditor is a controlled CodeMirror editor. */
export function CodeEditor({ value, onChange, language, errorLine, label, minHeight = 240 }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const lang = useRef(new Compartment());

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          history(),
          indentOnInput(),
          bracketMatching(),
          syntaxHighlighting(highlight),
          keymap.of([indentWithTab, ...defaultKeymap, ...historyKeymap]),
          lang.current.of(language === 'python' ? python() : json()),
          errorField,
          EditorView.contentAttributes.of({ 'aria-label': label }),
          EditorView.theme({ '.cm-content, .cm-gutter': { minHeight: `${minHeight}px` }, '.cm-scroller': { maxHeight: '60vh' } }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) onChangeRef.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // The editor is made once; value and language changes are applied below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const current = v.state.doc.toString();
    if (current !== value) v.dispatch({ changes: { from: 0, to: current.length, insert: value } });
  }, [value]);

  useEffect(() => {
    view.current?.dispatch({ effects: lang.current.reconfigure(language === 'python' ? python() : json()) });
  }, [language]);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    v.dispatch({ effects: setErrorLine.of(errorLine) });
    if (errorLine !== undefined && errorLine >= 1 && errorLine <= v.state.doc.lines) {
      v.dispatch({ effects: EditorView.scrollIntoView(v.state.doc.line(errorLine).from, { y: 'center' }) });
    }
  }, [errorLine]);

  return <div className="code-editor" ref={host} data-language={language} />;
}
