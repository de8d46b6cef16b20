// What a screen shows while its data loads, and when it could not be
// opened: one sentence from the backend, a retry and a way back.

export function Opening({ what }: { what: string }) {
  return (
    <p className="loading pad">
      <span className="spinner" aria-hidden="true" /> Opening {what}…
    </p>
  );
}

export function OpenFailed(props: { title: string; message: string; onRetry: () => void; backHref: string; backLabel: string }) {
  return (
    <section className="panel error-panel" role="alert">
      <div className="error-body">
        <h2>{props.title}</h2>
        <p className="error-message">{props.message}</p>
        <button type="button" className="button primary" onClick={props.onRetry}>
          Try again
        </button>{' '}
        <a className="button" href={props.backHref}>
          {props.backLabel}
        </a>
      </div>
    </section>
  );
}
