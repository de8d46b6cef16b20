import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { api } from './bridge';
import { startTheme } from './ui/theme';
import './styles.css';

// The theme remembered here shows at once; the stored setting follows.
void startTheme(api);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

createRoot(root).render(
  <StrictMode>
    <App api={api} />
  </StrictMode>,
);
