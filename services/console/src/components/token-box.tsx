// An optional token for the APIs that may run without one (scheduler with ACLs off,
// registry with public reads, controller without api_token): kept per API, sent in that
// API's header (lib/session.ts).
import { useState } from 'react';
import { useTokenVersion } from '../app-context';
import type { ApiName } from '../lib/api-errors';
import { getToken, setToken } from '../lib/session';

export function TokenBox({ api, label }: { api: ApiName; label: string }) {
  useTokenVersion();
  const current = getToken(api);
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  if (!open) {
    return (
      <div className="token-box">
        <span>{current ? `Using your ${label} token.` : `No ${label} token (anonymous access).`}</span>{' '}
        <button type="button" className="link-button" onClick={() => setOpen(true)}>
          {current ? 'Change token' : 'Set token'}
        </button>
        {current ? (
          <button type="button" className="link-button" onClick={() => setToken(api, '')}>
            Forget token
          </button>
        ) : null}
      </div>
    );
  }
  return (
    <form
      className="token-box"
      aria-label={`${label} token`}
      onSubmit={(e) => {
        e.preventDefault();
        setToken(api, text.trim());
        setText('');
        setOpen(false);
      }}
    >
      <label htmlFor={`token-${api}`}>{label} token</label>{' '}
      <input id={`token-${api}`} type="password" value={text} autoComplete="off" onChange={(e) => setText(e.target.value)} />{' '}
      <button type="submit">Use token</button>{' '}
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}
