import { useState } from 'react';
import type { DucklmApi } from './bridge';
import { Home } from './home/Home';
import { DuckMark } from './ui/icons';

interface AppProps {
  api: DucklmApi;
}

/** App is the window's shell: a compact header and the current screen. */
export function App({ api }: AppProps) {
  const [version, setVersion] = useState<string>();
  return (
    <div className="app">
      <header className="app-header">
        <DuckMark />
        <h1 className="app-name">ducklm</h1>
        {version !== undefined && <span className="app-version">v{version.replace(/^v/, '')}</span>}
      </header>
      <main className="app-main">
        <Home api={api} onVersion={setVersion} />
      </main>
    </div>
  );
}
