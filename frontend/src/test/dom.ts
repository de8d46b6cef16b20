// DOM helpers for component tests: jsdom lacks a few layout APIs that
// CodeMirror calls, and CodeMirror is edited through its view.
import { EditorView } from '@codemirror/view';
import { act } from '@testing-library/react';

/** polyfillLayout gives jsdom the Range geometry CodeMirror measures with. */
export function polyfillLayout(): void {
  const rect = { x: 0, y: 0, width: 0, height: 0, top: 0, left: 0, right: 0, bottom: 0, toJSON: () => ({}) };
  const proto = Range.prototype as unknown as Record<string, unknown>;
  proto.getClientRects ??= () => ({ length: 0, item: () => null, [Symbol.iterator]: [][Symbol.iterator] });
  proto.getBoundingClientRect ??= () => rect;
}

/** editorIn returns the CodeMirror view inside container. */
export function editorIn(container: HTMLElement): EditorView {
  const dom = container.querySelector('.cm-editor');
  if (!dom) throw new Error('no CodeMirror editor here');
  const view = EditorView.findFromDOM(dom as HTMLElement);
  if (!view) throw new Error('no CodeMirror view here');
  return view;
}

/** typeInto replaces the editor's text, as typing would. */
export function typeInto(container: HTMLElement, text: string): void {
  const view = editorIn(container);
  act(() => {
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
  });
}
