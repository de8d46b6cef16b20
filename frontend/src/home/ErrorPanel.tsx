import { NO_TOKEN } from '../bridge';
import { FailIcon } from '../ui/icons';
import './home.css';

interface ErrorPanelProps {
  message: string;
  onRetry: () => void;
}

/**
 * ErrorPanel replaces Home when the overview cannot be read. A page of
 * `ducklm serve` opened without its token is not data ducklm failed to
 * open, and trying again cannot help: it says which address to open.
 */
export function ErrorPanel({ message, onRetry }: ErrorPanelProps) {
  const noToken = message === NO_TOKEN;
  return (
    <section className="panel error-panel" role="alert" aria-labelledby="error-title">
      <FailIcon className="error-icon" width={28} height={28} />
      <div className="error-body">
        <h2 id="error-title">{noToken ? 'Open the address ducklm serve printed' : 'ducklm could not open its data'}</h2>
        <p className="error-message">{message}</p>
        {!noToken && (
          <button type="button" className="button primary" onClick={onRetry}>
            Retry
          </button>
        )}
      </div>
    </section>
  );
}
