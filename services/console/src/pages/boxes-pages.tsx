// Boxes (issue 32, item 4): search with provider and sort, a box page with versions,
// providers, checksums and the `vagrant box add` line, a user or organisation page, and
// sign-in and token management for the signed-in user. The Vagrant Cloud API v1 as
// docs/boxes.md describes it.
import { useState } from 'react';
import { navigate, useApi, useLoad, useTokenVersion } from '../app-context';
import { formatTime } from '../lib/format';
import { href } from '../lib/router';
import { getToken, setToken } from '../lib/session';
import { ActionForm, CopyLine, Field, KeyValues, Link, Notice, Show, StatusBadge } from '../components/ui';

interface Provider {
  name: string;
  hosted: boolean;
  original_url: string | null;
  download_url: string;
  checksum: string | null;
  checksum_type: string | null;
}
interface Version {
  version: string;
  status: string;
  description_markdown?: string;
  created_at: string;
  providers: Provider[];
}
interface Box {
  tag: string;
  name: string;
  username: string;
  short_description: string;
  description_markdown?: string;
  private: boolean;
  downloads: number;
  updated_at: string;
  current_version: Version | null;
  versions?: Version[];
}

const SORTS = [
  ['downloads', 'Most downloaded'],
  ['created', 'Newest'],
  ['updated', 'Recently updated'],
] as const;

export function BoxesPage({ q, provider, sort }: { q: string; provider: string; sort: string }) {
  const api = useApi();
  const [text, setText] = useState(q);
  const [prov, setProv] = useState(provider);
  const [order, setOrder] = useState(sort || 'downloads');
  const [boxes, reload] = useLoad(
    async (signal) => (await api.call<{ boxes: Box[] }>('boxes', '/api/v1/search', { query: { q, provider, sort: sort || undefined, limit: 50 }, signal })).data.boxes ?? [],
    [q, provider, sort],
  );
  return (
    <div className="page">
      <h1>Boxes</h1>
      <BoxesAccountLine />
      <form
        className="filter-form"
        role="search"
        aria-label="Box search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(href({ page: 'boxes', q: text.trim(), provider: prov.trim(), sort: order === 'downloads' ? '' : order }));
        }}
      >
        <label htmlFor="box-q">Search</label>
        <input id="box-q" type="search" value={text} placeholder="name, user or description" onChange={(e) => setText(e.target.value)} />
        <label htmlFor="box-provider">Provider</label>
        <input id="box-provider" value={prov} placeholder="virtualbox" onChange={(e) => setProv(e.target.value)} />
        <label htmlFor="box-sort">Sort</label>
        <select id="box-sort" value={order} onChange={(e) => setOrder(e.target.value)}>
          {SORTS.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        <button type="submit">Search</button>
      </form>
      <Show value={boxes} what="the boxes" onRetry={reload}>
        {(list) => (list.length === 0 ? <Notice>No released box matches.</Notice> : <BoxList boxes={list} />)}
      </Show>
    </div>
  );
}

function BoxList({ boxes }: { boxes: Box[] }) {
  return (
    <ul className="cards" aria-label="Boxes">
      {boxes.map((b) => (
        <li key={b.tag} className="card">
          <h3>
            <Link href={href({ page: 'box', user: b.username, box: b.name })}>{b.tag}</Link> {b.private ? <StatusBadge status="private" /> : null}
          </h3>
          <p>{b.short_description || <em>No description.</em>}</p>
          <small>
            {b.current_version ? `v${b.current_version.version} · ${b.current_version.providers.map((p) => p.name).join(', ')} · ` : ''}
            {b.downloads} downloads
          </small>
        </li>
      ))}
    </ul>
  );
}

function BoxesAccountLine() {
  useTokenVersion();
  const signedIn = getToken('boxes') !== '';
  return (
    <p className="token-box">
      {signedIn ? 'Signed in to boxes. ' : 'Browsing public boxes. '}
      <Link href={href({ page: 'boxes-account' })}>{signedIn ? 'Account and tokens' : 'Sign in'}</Link>
    </p>
  );
}

/** Where vagrant finds this server: the origin of the box's download URLs (BOXES_PUBLIC_URL), else this page's. */
export function vagrantServerUrl(box: Box): string {
  const url = box.versions?.flatMap((v) => v.providers).find((p) => p.download_url)?.download_url;
  try {
    if (url) return new URL(url).origin;
  } catch {
    // fall through
  }
  return location.origin;
}

export function BoxPage({ user, box }: { user: string; box: string }) {
  const api = useApi();
  const [data, reload] = useLoad(
    async (signal) => (await api.call<Box>('boxes', `/api/v1/box/${encodeURIComponent(user)}/${encodeURIComponent(box)}`, { signal })).data,
    [user, box],
  );
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'boxes', q: '', provider: '', sort: '' })}>Boxes</Link> / <Link href={href({ page: 'boxes-user', user })}>{user}</Link> / {box}
      </nav>
      <h1>
        {user}/{box}
      </h1>
      <Show value={data} what="the box" onRetry={reload}>
        {(b) => (
          <>
            <p>{b.short_description}</p>
            <KeyValues
              rows={[
                ['Visibility', b.private ? 'private' : 'public'],
                ['Downloads', String(b.downloads)],
                ['Current version', b.current_version?.version ?? 'none released'],
                ['Updated', formatTime(b.updated_at)],
              ]}
            />
            {b.current_version ? (
              <CopyLine
                label="Add this box"
                text={`VAGRANT_SERVER_URL=${vagrantServerUrl(b)} vagrant box add ${b.tag} --box-version ${b.current_version.version}${b.current_version.providers[0] ? ` --provider ${b.current_version.providers[0].name}` : ''}`}
              />
            ) : null}
            <h2>Versions</h2>
            {(b.versions ?? []).length === 0 ? <Notice>No versions.</Notice> : null}
            {(b.versions ?? []).map((v) => (
              <article key={v.version} className="card" aria-label={`Version ${v.version}`}>
                <h3>
                  {v.version} <StatusBadge status={v.status} /> <small>{formatTime(v.created_at)}</small>
                </h3>
                {v.description_markdown ? <p>{v.description_markdown}</p> : null}
                {v.providers.length === 0 ? (
                  <Notice>No providers.</Notice>
                ) : (
                  <div className="table-wrap">
                    <table aria-label={`Providers of ${v.version}`}>
                      <thead>
                        <tr>
                          <th scope="col">Provider</th>
                          <th scope="col">Hosted</th>
                          <th scope="col">Checksum</th>
                          <th scope="col">Download</th>
                        </tr>
                      </thead>
                      <tbody>
                        {v.providers.map((p) => (
                          <tr key={p.name}>
                            <td>{p.name}</td>
                            <td>{p.hosted ? 'uploaded' : 'external'}</td>
                            <td>{p.checksum ? <code className="checksum">{`${p.checksum_type}:${p.checksum}`}</code> : '—'}</td>
                            <td>
                              <a href={p.download_url} rel="noopener noreferrer">
                                download
                              </a>
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                )}
              </article>
            ))}
          </>
        )}
      </Show>
    </div>
  );
}

interface UserPage {
  username: string;
  profile_markdown?: string;
  boxes: Box[];
}

export function BoxesUserPage({ user }: { user: string }) {
  const api = useApi();
  const [data, reload] = useLoad(async (signal) => (await api.call<UserPage>('boxes', `/api/v1/user/${encodeURIComponent(user)}`, { signal })).data, [user]);
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'boxes', q: '', provider: '', sort: '' })}>Boxes</Link> / {user}
      </nav>
      <h1>{user}</h1>
      <Show value={data} what={`${user}'s boxes`} onRetry={reload}>
        {(u) => (
          <>
            {u.profile_markdown ? <p>{u.profile_markdown}</p> : null}
            {u.boxes.length === 0 ? <Notice>No boxes you can see.</Notice> : <BoxList boxes={u.boxes} />}
          </>
        )}
      </Show>
    </div>
  );
}

export function BoxesAccountPage() {
  const api = useApi();
  useTokenVersion();
  const token = getToken('boxes');
  const [login, setLogin] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [description, setDescription] = useState('selfstack console');
  const [tokenText, setTokenText] = useState('');
  const [created, setCreated] = useState('');
  const [me, reload] = useLoad(
    async (signal) => (token ? (await api.call<{ user: { username: string; email?: string; is_admin?: boolean } }>('boxes', '/api/v1/authenticate', { signal })).data.user : undefined),
    [token],
  );
  const authenticate = async (desc: string) => {
    const r = await api.call<{ token: string }>('boxes', '/api/v1/authenticate', {
      method: 'POST',
      token: '',
      body: { token: { description: desc }, user: { login, password }, ...(code ? { two_factor: { code } } : {}) },
    });
    return r.data.token;
  };
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'boxes', q: '', provider: '', sort: '' })}>Boxes</Link> / account
      </nav>
      <h1>Boxes account</h1>
      {token ? (
        <>
          <Show value={me} what="your account" onRetry={reload}>
            {(u) =>
              u ? (
                <KeyValues
                  rows={[
                    ['User', <Link key="u" href={href({ page: 'boxes-user', user: u.username })}>{u.username}</Link>],
                    ['E-mail', u.email ?? '—'],
                    ['Administrator', u.is_admin ? 'yes' : 'no'],
                  ]}
                />
              ) : null
            }
          </Show>
          <section aria-labelledby="new-token">
            <h2 id="new-token">Create an API token</h2>
            <p>A token for vagrant or scripts (`vagrant cloud auth login --token …`). The API creates tokens from your credentials; it is shown once.</p>
            <ActionForm
              label="Create an API token"
              submit="Create token"
              action={async () => {
                setCreated(await authenticate(description));
                setPassword('');
              }}
            >
              <Field label="Username or e-mail" value={login} onChange={setLogin} required autoComplete="username" />
              <Field label="Password" type="password" value={password} onChange={setPassword} required autoComplete="current-password" />
              <Field label="Two-factor code (if enabled)" value={code} onChange={setCode} />
              <Field label="Description" value={description} onChange={setDescription} />
            </ActionForm>
            {created ? <CopyLine label="New token" text={created} /> : null}
          </section>
          <section aria-labelledby="revoke-token">
            <h2 id="revoke-token">Sign out</h2>
            <ActionForm
              label="Revoke this token"
              submit="Revoke this session's token and sign out"
              danger
              action={async () => {
                await api.call('boxes', '/api/v1/authenticate', { method: 'DELETE' });
                setToken('boxes', '');
              }}
            />
            <button type="button" onClick={() => setToken('boxes', '')}>
              Sign out (keep the token valid)
            </button>
          </section>
        </>
      ) : (
        <>
          <section aria-labelledby="boxes-signin">
            <h2 id="boxes-signin">Sign in</h2>
            <ActionForm
              label="Sign in to boxes"
              submit="Sign in"
              action={async () => {
                const t = await authenticate('selfstack console');
                setPassword('');
                setToken('boxes', t);
              }}
            >
              <Field label="Username or e-mail" value={login} onChange={setLogin} required autoComplete="username" />
              <Field label="Password" type="password" value={password} onChange={setPassword} required autoComplete="current-password" />
              <Field label="Two-factor code (if enabled)" value={code} onChange={setCode} />
            </ActionForm>
          </section>
          <section aria-labelledby="boxes-token">
            <h2 id="boxes-token">Or use an existing token</h2>
            <ActionForm
              label="Use a boxes token"
              submit="Use token"
              action={async () => {
                await api.call('boxes', '/api/v1/authenticate', { token: tokenText });
                setToken('boxes', tokenText);
              }}
            >
              <Field label="API token" type="password" value={tokenText} onChange={setTokenText} required />
            </ActionForm>
          </section>
        </>
      )}
    </div>
  );
}
