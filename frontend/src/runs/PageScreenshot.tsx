import { useLoad } from '../ui/useLoad';
import './runs.css';

/** screenshotOf is the screenshot a browser step's output names, if any. */
export function screenshotOf(tool: string | undefined, output: unknown): { finalUrl: string } | undefined {
  if (tool !== 'browser' || typeof output !== 'object' || output === null) return undefined;
  const o = output as { screenshot?: unknown; final_url?: unknown };
  if (typeof o.screenshot !== 'object' || o.screenshot === null) return undefined;
  return { finalUrl: typeof o.final_url === 'string' ? o.final_url : '' };
}

/** PageScreenshot shows the screenshot a browser step took of its page. */
export function PageScreenshot({ load, finalUrl }: { load: () => Promise<string>; finalUrl: string }) {
  const [shot] = useLoad(load, [load]);
  return (
    <div>
      <span className="field-label">Screenshot of the page</span>
      {shot.status === 'loading' && <p className="muted small">Loading the screenshot…</p>}
      {shot.status === 'error' && <p className="inline-error small">{shot.message}</p>}
      {shot.value && <img className="page-shot" src={shot.value} alt={`Screenshot of ${finalUrl || 'the page'}`} data-testid="page-screenshot" />}
    </div>
  );
}
