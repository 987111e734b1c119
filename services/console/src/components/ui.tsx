// Shared building blocks: links that navigate without a reload, loading and error states
// (role=status / role=alert, the API's own message), labelled fields, copyable lines.
import { useId, useState, type AnchorHTMLAttributes, type ReactNode } from 'react';
import { navigate, type Loaded } from '../app-context';

export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const { href, onClick, ...rest } = props;
  return (
    <a
      {...rest}
      href={href}
      onClick={(e) => {
        onClick?.(e);
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || rest.target) return;
        e.preventDefault();
        navigate(href);
      }}
    />
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

export function ErrorMessage({ title, message, onRetry }: { title?: string; message: string; onRetry?: () => void }) {
  return (
    <div className="error" role="alert">
      {title ? <strong>{title}: </strong> : null}
      <span className="error-text">{message}</span>
      {onRetry ? (
        <button type="button" className="link-button" onClick={onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

/** Renders a Loaded<T>: spinner, error with retry, or the content. */
export function Show<T>({ value, what, onRetry, children }: { value: Loaded<T>; what: string; onRetry?: () => void; children: (data: T) => ReactNode }) {
  if (value.state === 'loading') return <Loading what={what} />;
  if (value.state === 'error') return <ErrorMessage title={`Could not load ${what}`} message={value.message} onRetry={onRetry} />;
  return <>{children(value.data)}</>;
}

export function Field(props: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  type?: string;
  placeholder?: string;
  required?: boolean;
  multiline?: number;
  hint?: string;
  autoComplete?: string;
  name?: string;
}) {
  const id = useId();
  const hintId = props.hint ? `${id}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.multiline ? (
        <textarea
          id={id}
          name={props.name}
          rows={props.multiline}
          value={props.value}
          placeholder={props.placeholder}
          required={props.required}
          aria-describedby={hintId}
          spellCheck={false}
          onChange={(e) => props.onChange(e.target.value)}
        />
      ) : (
        <input
          id={id}
          name={props.name}
          type={props.type ?? 'text'}
          value={props.value}
          placeholder={props.placeholder}
          required={props.required}
          aria-describedby={hintId}
          autoComplete={props.autoComplete ?? 'off'}
          spellCheck={false}
          onChange={(e) => props.onChange(e.target.value)}
        />
      )}
      {props.hint ? (
        <small id={hintId} className="hint">
          {props.hint}
        </small>
      ) : null}
    </div>
  );
}

export function CopyLine({ label, text }: { label: string; text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="copy-line">
      <span className="copy-label">{label}</span>
      <code>{text}</code>
      <button
        type="button"
        aria-label={`Copy ${label}`}
        onClick={() => {
          void navigator.clipboard?.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          );
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`}>{status}</span>;
}

/**
 * A form whose submit runs `action`; while it runs the submit button is disabled, and a
 * failure is shown inside the form with the API's message (issue 32: bad input is refused
 * in the form, never a blank page).
 */
export function ActionForm(props: {
  label: string;
  submit: string;
  action: () => Promise<string | void>;
  children?: ReactNode;
  className?: string;
  danger?: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  return (
    <form
      aria-label={props.label}
      className={props.className ?? 'form'}
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError('');
        setDone('');
        props.action().then(
          (message) => {
            setBusy(false);
            if (message) setDone(message);
          },
          (err: unknown) => {
            setBusy(false);
            setError(err instanceof Error ? err.message : String(err));
          },
        );
      }}
    >
      {props.children}
      {error ? <ErrorMessage message={error} /> : null}
      {done ? <p className="success" role="status">{done}</p> : null}
      <button type="submit" disabled={busy} className={props.danger ? 'danger' : 'primary'}>
        {busy ? 'Working…' : props.submit}
      </button>
    </form>
  );
}

export function Unavailable({ reason }: { reason: string }) {
  return (
    <div className="unavailable" role="note">
      <strong>Not available here. </strong>
      {reason}
    </div>
  );
}

export function KeyValues({ rows }: { rows: [string, ReactNode][] }) {
  return (
    <dl className="kv">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v ?? '—'}</dd>
        </div>
      ))}
    </dl>
  );
}
