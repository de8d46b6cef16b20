// The design tokens, then the shared sheet: first in the cascade, before any
// screen's own sheet (imported by its components).
import './tokens.css';
import './base.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App, screenCode } from './App';
import { api } from './bridge';
import { parseRoute } from './lib/route';
import { primeTimeline } from './timeline/prime';
import { startTheme } from './ui/theme';

// The theme remembered here shows at once; the stored setting follows.
void startTheme(api);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

// The first screen's code comes before the first render (a failed fetch is
// tried again when the screen renders); a timeline's first read travels
// meanwhile.
const first = parseRoute(window.location.hash);
if (first.screen === 'timeline' && first.seq === undefined) primeTimeline(api, first.runId);
void screenCode(first)
  .catch(() => {})
  .then(() =>
    createRoot(root).render(
      <StrictMode>
        <App api={api} />
      </StrictMode>,
    ),
  );
