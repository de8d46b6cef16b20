import { FailIcon } from '../ui/icons';
import './home.css';

interface ErrorPanelProps {
  message: string;
  onRetry: () => void;
}

/** ErrorPanel replaces Home when the overview cannot be read. */
export function ErrorPanel({ message, onRetry }: ErrorPanelProps) {
  return (
    <section className="panel error-panel" role="alert" aria-labelledby="error-title">
      <FailIcon className="error-icon" width={28} height={28} />
      <div className="error-body">
        <h2 id="error-title">ducklm could not open its data</h2>
        <p className="error-message">{message}</p>
        <button type="button" className="button primary" onClick={onRetry}>
          Retry
        </button>
      </div>
    </section>
  );
}
