// Secrets (issue 32, item 2): seal status with the init or unseal form, token sign-in,
// mounts, a KV browser (folders, versions and metadata, check-and-set writes, delete /
// undelete / destroy) and policies. Only the Vault HTTP API (docs/secrets.md).
import { useState } from 'react';
import { navigate, useApi, useLoad, useTokenVersion } from '../app-context';
import type { ApiClient } from '../lib/api-client';
import { ApiError } from '../lib/api-errors';
import {
  crumbs,
  dataPath,
  kvMounts,
  listPath,
  metadataPath,
  parentFolder,
  parseSecretJson,
  versionActionPath,
  versionRows,
  writeBody,
  type KvMount,
  type MountInfo,
  type VersionMeta,
} from '../lib/kv';
import { formatTime } from '../lib/format';
import { href } from '../lib/router';
import { getToken, setToken } from '../lib/session';
import { ActionForm, ErrorMessage, Field, KeyValues, Link, Notice, Show, StatusBadge } from '../components/ui';

interface Envelope<T> {
  data?: T;
  warnings?: string[] | null;
}
interface SealStatus {
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
  version?: string;
  cluster_name?: string;
}
interface TokenInfo {
  display_name?: string;
  policies?: string[];
  ttl?: number;
  expire_time?: string | null;
  accessor?: string;
}

async function sealStatus(api: ApiClient, signal?: AbortSignal): Promise<SealStatus> {
  return (await api.call<SealStatus>('secrets', '/v1/sys/seal-status', { signal })).data;
}

async function mountsOf(api: ApiClient, signal?: AbortSignal): Promise<Record<string, MountInfo>> {
  const r = await api.call<Envelope<Record<string, MountInfo>> & Record<string, unknown>>('secrets', '/v1/sys/mounts', { signal });
  return (r.data.data ?? (r.data as unknown as Record<string, MountInfo>)) as Record<string, MountInfo>;
}

/** Seal status and the forms it calls for; children render once unsealed. */
function SealGate({ children }: { children: React.ReactNode }) {
  const api = useApi();
  const [status, reload] = useLoad((s) => sealStatus(api, s), []);
  return (
    <Show value={status} what="the seal status" onRetry={reload}>
      {(st) => (!st.initialized ? <InitForm onDone={reload} /> : st.sealed ? <UnsealForm status={st} onDone={reload} /> : <>{children}</>)}
    </Show>
  );
}

function InitForm({ onDone }: { onDone: () => void }) {
  const api = useApi();
  const [shares, setShares] = useState('5');
  const [threshold, setThreshold] = useState('3');
  const [result, setResult] = useState<{ keys_base64: string[]; root_token: string } | undefined>();
  if (result) {
    return (
      <section aria-labelledby="init-done">
        <h2 id="init-done">Initialised</h2>
        <Notice>Store these now: they are shown once. The service stays sealed until enough keys are entered.</Notice>
        <KeyValues rows={[['Root token', <code key="t">{result.root_token}</code>], ...result.keys_base64.map((k, i): [string, React.ReactNode] => [`Unseal key ${i + 1}`, <code key={k}>{k}</code>])]} />
        <button type="button" className="primary" onClick={onDone}>
          Continue to unseal
        </button>
      </section>
    );
  }
  return (
    <section aria-labelledby="init-title">
      <h2 id="init-title">Initialise the secrets service</h2>
      <p>The service is not initialised. Choose how many unseal key shares to create and how many are needed to unseal.</p>
      <ActionForm
        label="Initialise"
        submit="Initialise"
        action={async () => {
          const r = await api.call<{ keys_base64: string[]; root_token: string }>('secrets', '/v1/sys/init', {
            method: 'PUT',
            body: { secret_shares: Number(shares), secret_threshold: Number(threshold) },
          });
          setResult(r.data);
        }}
      >
        <Field label="Key shares" type="number" value={shares} onChange={setShares} required />
        <Field label="Key threshold" type="number" value={threshold} onChange={setThreshold} required />
      </ActionForm>
    </section>
  );
}

function UnsealForm({ status, onDone }: { status: SealStatus; onDone: () => void }) {
  const api = useApi();
  const [key, setKey] = useState('');
  const [progress, setProgress] = useState(status.progress);
  return (
    <section aria-labelledby="unseal-title">
      <h2 id="unseal-title">Unseal the secrets service</h2>
      <p>
        The service is sealed. Enter unseal keys: {progress} of {status.t} given.
      </p>
      <ActionForm
        label="Unseal"
        submit="Unseal"
        action={async () => {
          const r = await api.call<SealStatus>('secrets', '/v1/sys/unseal', { method: 'PUT', body: { key } });
          setKey('');
          setProgress(r.data.progress);
          if (!r.data.sealed) onDone();
          return r.data.sealed ? `Key accepted: ${r.data.progress} of ${r.data.t}.` : undefined;
        }}
      >
        <Field label="Unseal key" type="password" value={key} onChange={setKey} required autoComplete="off" />
      </ActionForm>
    </section>
  );
}

function SignIn() {
  const api = useApi();
  const [token, setTokenText] = useState('');
  return (
    <section aria-labelledby="signin-title">
      <h2 id="signin-title">Sign in</h2>
      <p>Sign in with a token. (Only the token auth method exists on this server; the console offers username and password once the userpass method does.)</p>
      <ActionForm
        label="Sign in to secrets"
        submit="Sign in"
        action={async () => {
          await api.call('secrets', '/v1/auth/token/lookup-self', { token });
          setToken('secrets', token);
        }}
      >
        <Field label="Token" type="password" name="token" value={token} onChange={setTokenText} required autoComplete="current-password" />
      </ActionForm>
    </section>
  );
}

export function SecretsPage() {
  const api = useApi();
  useTokenVersion();
  const signedIn = getToken('secrets') !== '';
  return (
    <div className="page">
      <h1>Secrets</h1>
      <SealGate>{signedIn ? <SecretsHome api={api} /> : <SignIn />}</SealGate>
    </div>
  );
}

function SecretsHome({ api }: { api: ApiClient }) {
  const [self, reloadSelf] = useLoad(async (signal) => (await api.call<Envelope<TokenInfo>>('secrets', '/v1/auth/token/lookup-self', { signal })).data.data ?? {}, []);
  const [mounts, reloadMounts] = useLoad((signal) => mountsOf(api, signal), []);
  return (
    <>
      <section aria-labelledby="token-title">
        <h2 id="token-title">Your token</h2>
        {self.state === 'error' && (self.status === 403 || self.status === 401) ? (
          <ErrorMessage title="The stored token was refused" message={self.message} />
        ) : null}
        <Show value={self} what="your token" onRetry={reloadSelf}>
          {(t) => (
            <KeyValues
              rows={[
                ['Name', t.display_name],
                ['Policies', (t.policies ?? []).join(', ')],
                ['Expires', t.expire_time ? formatTime(t.expire_time) : 'never'],
              ]}
            />
          )}
        </Show>
        <button type="button" onClick={() => setToken('secrets', '')}>
          Sign out
        </button>
      </section>
      <section aria-labelledby="mounts-title">
        <h2 id="mounts-title">Secrets engines</h2>
        <Show value={mounts} what="the mounts" onRetry={reloadMounts}>
          {(m) => (
            <table>
              <thead>
                <tr>
                  <th scope="col">Path</th>
                  <th scope="col">Type</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(m)
                  .filter(([p, v]) => p.endsWith('/') && v && typeof v === 'object' && 'type' in v)
                  .map(([p, v]) => {
                    const kv = kvMounts({ [p]: v })[0];
                    return (
                      <tr key={p}>
                        <td>{kv ? <Link href={href({ page: 'secrets-kv', mount: kv.path, path: '' })}>{p}</Link> : p}</td>
                        <td>
                          {v.type}
                          {kv ? ` v${kv.version}` : ''}
                        </td>
                        <td>{v.description}</td>
                      </tr>
                    );
                  })}
              </tbody>
            </table>
          )}
        </Show>
        <p>
          <Link href={href({ page: 'secrets-policies' })}>Policies</Link>
        </p>
      </section>
    </>
  );
}

export function KvPage({ mount, path }: { mount: string; path: string }) {
  const api = useApi();
  useTokenVersion();
  const [info] = useLoad(async (signal) => {
    const all = await mountsOf(api, signal);
    const found = kvMounts(all).find((m) => m.path === mount);
    if (!found) throw new ApiError('secrets', 404, `no KV secrets engine is mounted at ${mount}/`);
    return found;
  }, [mount]);
  const isFolder = path === '' || path.endsWith('/');
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'secrets' })}>Secrets</Link> /{' '}
        <Link href={href({ page: 'secrets-kv', mount, path: '' })}>{mount}/</Link>
        {crumbs(path).map(([label, p]) => (
          <span key={p}>
            {' '}
            <Link href={href({ page: 'secrets-kv', mount, path: p })}>{label}</Link>
          </span>
        ))}
      </nav>
      <h1>{isFolder ? `${mount}/${path}` : path.split('/').at(-1)}</h1>
      {getToken('secrets') === '' ? (
        <Notice>
          Sign in on the <Link href={href({ page: 'secrets' })}>Secrets</Link> page first.
        </Notice>
      ) : (
        <Show value={info} what="the secrets engine">
          {(m) => (isFolder ? <KvFolder mount={m} folder={path} /> : <KvSecret mount={m} keyPath={path} />)}
        </Show>
      )}
    </div>
  );
}

function KvFolder({ mount, folder }: { mount: KvMount; folder: string }) {
  const api = useApi();
  const [keys, reload] = useLoad(async (signal) => {
    const r = await api.call<Envelope<{ keys: string[] }>>('secrets', listPath(mount, folder), { query: { list: 'true' }, signal, accept: [404] });
    return r.status === 404 ? [] : (r.data.data?.keys ?? []);
  }, [mount.path, folder]);
  const [name, setName] = useState('');
  const [json, setJson] = useState('{\n  "key": "value"\n}');
  return (
    <>
      <Show value={keys} what="the folder" onRetry={reload}>
        {(ks) =>
          ks.length === 0 ? (
            <Notice>This folder is empty.</Notice>
          ) : (
            <ul className="listing" aria-label="Keys">
              {ks.map((k) => (
                <li key={k}>
                  <Link href={href({ page: 'secrets-kv', mount: mount.path, path: folder + k })}>
                    <span aria-hidden="true">{k.endsWith('/') ? '📁 ' : '🔑 '}</span>
                    {k}
                  </Link>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      <section aria-labelledby="new-secret">
        <h2 id="new-secret">Create a secret</h2>
        <ActionForm
          label="Create a secret"
          submit="Create"
          action={async () => {
            const key = name.trim().replace(/^\/+/, '');
            if (!key || key.endsWith('/')) throw new Error('give the secret a name (a path without a trailing slash)');
            const parsed = parseSecretJson(json);
            if (!parsed.ok) throw new Error(parsed.error);
            // cas 0: create only, never overwrite a secret someone else wrote meanwhile.
            await api.call('secrets', dataPath(mount, folder + key), { method: 'PUT', body: writeBody(mount, parsed.data, mount.version === 2 ? 0 : undefined) });
            navigate(href({ page: 'secrets-kv', mount: mount.path, path: folder + key }));
          }}
        >
          <Field label="Path" value={name} onChange={setName} required placeholder="app/config" hint={`Created under ${mount.path}/${folder}`} />
          <Field label="Data (JSON object)" value={json} onChange={setJson} multiline={6} required />
        </ActionForm>
      </section>
    </>
  );
}

interface KvRead {
  data: Record<string, unknown> | null;
  metadata?: VersionMeta & { version?: number };
}
interface KvMetadata {
  current_version: number;
  oldest_version: number;
  max_versions: number;
  cas_required: boolean;
  created_time: string;
  updated_time: string;
  custom_metadata: Record<string, string> | null;
  versions: Record<string, VersionMeta>;
}

function KvSecret({ mount, keyPath }: { mount: KvMount; keyPath: string }) {
  const api = useApi();
  const [version, setVersion] = useState<number | undefined>();
  const [secret, reloadSecret] = useLoad(async (signal) => {
    const r = await api.call<Envelope<KvRead | Record<string, unknown>>>('secrets', dataPath(mount, keyPath), {
      signal,
      query: { version },
      // A deleted or destroyed KV v2 version is a 404 that still carries its metadata.
      accept: mount.version === 2 ? [404] : [],
    });
    if (mount.version === 1) return { data: (r.data.data ?? {}) as Record<string, unknown> } as KvRead;
    if (r.status === 404 && !r.data?.data) throw new ApiError('secrets', 404, `no secret at ${mount.path}/${keyPath}`);
    return r.data.data as KvRead;
  }, [mount.path, keyPath, version]);
  const [meta, reloadMeta] = useLoad(
    async (signal) => (mount.version === 2 ? ((await api.call<Envelope<KvMetadata>>('secrets', metadataPath(mount, keyPath), { signal })).data.data ?? null) : null),
    [mount.path, keyPath],
  );
  const reload = () => {
    reloadSecret();
    reloadMeta();
  };
  const back = href({ page: 'secrets-kv', mount: mount.path, path: parentFolder(keyPath) });
  return (
    <>
      <section aria-labelledby="secret-data">
        <h2 id="secret-data">{version ? `Version ${version}` : 'Current version'}</h2>
        <Show value={secret} what="the secret" onRetry={reload}>
          {(s) =>
            s.data === null ? (
              <Notice>
                Version {s.metadata?.version} is {s.metadata?.destroyed ? 'destroyed' : 'deleted'}
                {s.metadata?.deletion_time ? ` (${formatTime(s.metadata.deletion_time)})` : ''}.
              </Notice>
            ) : (
              <table aria-label="Secret data">
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {Object.entries(s.data).map(([k, v]) => (
                    <tr key={k}>
                      <td>{k}</td>
                      <td>
                        <code className="secret-value">{typeof v === 'string' ? v : JSON.stringify(v)}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Show>
      </section>
      {mount.version === 2 ? (
        <Show value={meta} what="the metadata" onRetry={reload}>
          {(m) =>
            m ? (
              <>
                <KvVersions mount={mount} keyPath={keyPath} meta={m} selected={version} onSelect={setVersion} onChanged={reload} />
                <KvWrite mount={mount} keyPath={keyPath} current={secret.state === 'ready' && !version ? secret.data.data : null} cas={m.current_version} onDone={() => { setVersion(undefined); reload(); }} />
              </>
            ) : null
          }
        </Show>
      ) : (
        <>
          <KvWrite mount={mount} keyPath={keyPath} current={secret.state === 'ready' ? secret.data.data : null} onDone={reload} />
          <ActionForm
            label="Delete secret"
            submit="Delete this secret"
            danger
            action={async () => {
              if (!window.confirm(`Delete ${mount.path}/${keyPath}?`)) return;
              await api.call('secrets', dataPath(mount, keyPath), { method: 'DELETE' });
              navigate(back);
            }}
          />
        </>
      )}
    </>
  );
}

function KvVersions(props: { mount: KvMount; keyPath: string; meta: KvMetadata; selected?: number; onSelect: (v: number | undefined) => void; onChanged: () => void }) {
  const api = useApi();
  const { mount, keyPath, meta } = props;
  const [error, setError] = useState('');
  const act = async (action: 'delete' | 'undelete' | 'destroy', version: number) => {
    setError('');
    if (action === 'destroy' && !window.confirm(`Destroy version ${version} permanently?`)) return;
    try {
      await api.call('secrets', versionActionPath(mount, action, keyPath), { method: 'POST', body: { versions: [version] } });
      props.onChanged();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions and metadata</h2>
      <KeyValues
        rows={[
          ['Current version', String(meta.current_version)],
          ['Oldest version', String(meta.oldest_version)],
          ['Max versions', meta.max_versions === 0 ? 'engine default' : String(meta.max_versions)],
          ['Check-and-set required', meta.cas_required ? 'yes' : 'no'],
          ['Created', formatTime(meta.created_time)],
          ['Updated', formatTime(meta.updated_time)],
          ['Custom metadata', meta.custom_metadata ? JSON.stringify(meta.custom_metadata) : '—'],
        ]}
      />
      {error ? <ErrorMessage message={error} /> : null}
      <table aria-label="Versions">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">State</th>
            <th scope="col">Created</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {versionRows(meta.versions, meta.current_version).map((r) => (
            <tr key={r.version} aria-current={props.selected === r.version ? 'true' : undefined}>
              <td>
                <button type="button" className="link-button" onClick={() => props.onSelect(r.version === meta.current_version ? undefined : r.version)}>
                  v{r.version}
                </button>
              </td>
              <td>
                <StatusBadge status={r.state} />
              </td>
              <td>{formatTime(r.created)}</td>
              <td className="actions">
                {r.state === 'current' || r.state === 'active' ? (
                  <button type="button" onClick={() => void act('delete', r.version)}>
                    Delete
                  </button>
                ) : null}
                {r.state === 'deleted' ? (
                  <button type="button" onClick={() => void act('undelete', r.version)}>
                    Undelete
                  </button>
                ) : null}
                {r.state !== 'destroyed' ? (
                  <button type="button" className="danger" onClick={() => void act('destroy', r.version)}>
                    Destroy
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function KvWrite(props: { mount: KvMount; keyPath: string; current: Record<string, unknown> | null; cas?: number; onDone: () => void }) {
  const api = useApi();
  const [json, setJson] = useState<string | undefined>();
  const [cas, setCas] = useState<string | undefined>();
  const text = json ?? JSON.stringify(props.current ?? {}, null, 2);
  const casText = cas ?? (props.cas === undefined ? '' : String(props.cas));
  return (
    <section aria-labelledby="write-title">
      <h2 id="write-title">{props.mount.version === 2 ? 'Write a new version' : 'Edit'}</h2>
      <ActionForm
        label="Write secret"
        submit="Save"
        action={async () => {
          const parsed = parseSecretJson(text);
          if (!parsed.ok) throw new Error(parsed.error);
          let casNumber: number | undefined;
          if (props.mount.version === 2 && casText.trim() !== '') {
            casNumber = Number(casText);
            if (!Number.isInteger(casNumber) || casNumber < 0) throw new Error('check-and-set must be a whole number (the version you expect to replace)');
          }
          const r = await api.call<Envelope<{ version?: number }>>('secrets', dataPath(props.mount, props.keyPath), { method: 'PUT', body: writeBody(props.mount, parsed.data, casNumber) });
          setJson(undefined);
          setCas(undefined);
          props.onDone();
          return r.data?.data?.version ? `Saved as version ${r.data.data.version}.` : 'Saved.';
        }}
      >
        <Field label="Data (JSON object)" value={text} onChange={setJson} multiline={8} required />
        {props.mount.version === 2 ? (
          <Field label="Check-and-set version" type="number" value={casText} onChange={setCas} hint="The write succeeds only if this is still the current version (0 = create only). Empty: no check." />
        ) : null}
      </ActionForm>
    </section>
  );
}

export function PoliciesPage() {
  const api = useApi();
  const [list, reload] = useLoad(async (signal) => {
    const r = await api.call<Envelope<{ policies?: string[]; keys?: string[] }> & { policies?: string[] }>('secrets', '/v1/sys/policy', { signal });
    return r.data.data?.policies ?? r.data.data?.keys ?? r.data.policies ?? [];
  }, []);
  const [name, setName] = useState('');
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'secrets' })}>Secrets</Link> / Policies
      </nav>
      <h1>Policies</h1>
      <Show value={list} what="the policies" onRetry={reload}>
        {(ps) => (
          <ul className="listing" aria-label="Policies">
            {ps.map((p) => (
              <li key={p}>
                <Link href={href({ page: 'secrets-policy', name: p })}>{p}</Link>
              </li>
            ))}
          </ul>
        )}
      </Show>
      <ActionForm
        label="New policy"
        submit="Create policy"
        action={async () => {
          const n = name.trim().toLowerCase();
          if (!n) throw new Error('give the policy a name');
          navigate(href({ page: 'secrets-policy', name: n }));
        }}
      >
        <Field label="New policy name" value={name} onChange={setName} required />
      </ActionForm>
    </div>
  );
}

export function PolicyPage({ name }: { name: string }) {
  const api = useApi();
  const [policy, reload] = useLoad(async (signal) => {
    const r = await api.call<Envelope<{ rules?: string; policy?: string }> & { rules?: string }>('secrets', `/v1/sys/policy/${encodeURIComponent(name)}`, { signal, accept: [404] });
    if (r.status === 404) return { exists: false, rules: '' };
    return { exists: true, rules: r.data.data?.rules ?? r.data.data?.policy ?? r.data.rules ?? '' };
  }, [name]);
  const [text, setText] = useState<string | undefined>();
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'secrets' })}>Secrets</Link> / <Link href={href({ page: 'secrets-policies' })}>Policies</Link> / {name}
      </nav>
      <h1>Policy {name}</h1>
      <Show value={policy} what="the policy" onRetry={reload}>
        {(p) => (
          <>
            {!p.exists ? <Notice>This policy does not exist yet; saving creates it.</Notice> : null}
            <ActionForm
              label="Edit policy"
              submit="Save policy"
              action={async () => {
                await api.call('secrets', `/v1/sys/policy/${encodeURIComponent(name)}`, { method: 'PUT', body: { policy: text ?? p.rules } });
                setText(undefined);
                reload();
                return 'Saved.';
              }}
            >
              <Field label="Rules (HCL or JSON)" value={text ?? p.rules} onChange={setText} multiline={14} required />
            </ActionForm>
            {p.exists && name !== 'root' && name !== 'default' ? (
              <ActionForm
                label="Delete policy"
                submit="Delete policy"
                danger
                action={async () => {
                  if (!window.confirm(`Delete policy ${name}?`)) return;
                  await api.call('secrets', `/v1/sys/policy/${encodeURIComponent(name)}`, { method: 'DELETE' });
                  navigate(href({ page: 'secrets-policies' }));
                }}
              />
            ) : null}
          </>
        )}
      </Show>
    </div>
  );
}
