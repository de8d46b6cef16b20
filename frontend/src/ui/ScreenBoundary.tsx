import { Component, type ErrorInfo, type ReactNode } from 'react';
import { copyText } from '../bridge';
import { CopyButton } from './CopyButton';

interface ScreenBoundaryProps {
  /** The screen's name in the sentence ("the lineage"). */
  screen: string;
  children: ReactNode;
  /** When it changes (the user went elsewhere), a caught error is cleared and the children drawn again. */
  resetKey?: string;
  /** Reloads the window; a prop so tests can see it called. */
  reload?: () => void;
  /** Puts the details on the clipboard; a prop for tests. */
  copy?: (text: string) => Promise<void>;
}

interface ScreenBoundaryState {
  error?: Error;
  stack?: string;
}

/**
 * ScreenBoundary keeps a screen that throws while drawing from blanking the
 * window: it shows a sentence, the details to copy for a report, and a
 * reload. The shell passes the route as resetKey, so leaving the screen
 * clears it without remounting a screen that is fine.
 */
export class ScreenBoundary extends Component<ScreenBoundaryProps, ScreenBoundaryState> {
  override state: ScreenBoundaryState = {};

  static getDerivedStateFromError(error: unknown): ScreenBoundaryState {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override componentDidCatch(_error: unknown, info: ErrorInfo) {
    this.setState({ stack: info.componentStack ?? undefined });
  }

  override componentDidUpdate(prev: ScreenBoundaryProps) {
    if (prev.resetKey !== this.props.resetKey && this.state.error) this.setState({ error: undefined, stack: undefined });
  }

  override render() {
    const { error, stack } = this.state;
    if (!error) return this.props.children;
    const details = [`${error.name}: ${error.message}`, error.stack ?? '', stack ? `Components:${stack}` : '']
      .filter(Boolean)
      .join('\n');
    const reload = this.props.reload ?? (() => window.location.reload());
    return (
      <section className="panel error-panel screen-error" role="alert" data-testid="screen-error">
        <div className="error-body min0">
          <h2>Something went wrong while drawing {this.props.screen}.</h2>
          <p className="error-message">
            Nothing was lost: your runs and settings are in the data directory. Reload the window, or open another
            section from the sidebar. If it happens again, copy the details below into a bug report.
          </p>
          <p>
            <button type="button" className="button primary" onClick={reload}>
              Reload
            </button>
          </p>
          <details className="screen-error-details">
            <summary>
              Details <CopyButton text={details} what="the error details" copy={this.props.copy ?? copyText} />
            </summary>
            <pre className="mono small">{details}</pre>
          </details>
        </div>
      </section>
    );
  }
}
