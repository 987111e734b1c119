// Registry (issue 32, item 5): browse and search modules; a module page with its README
// rendered and sanitised, inputs, outputs, resources, submodules, versions, and the
// `source`/`version` lines for a configuration. The Terraform module registry protocol
// and its extensions (docs/registry.md).
import { useState } from 'react';
import { navigate, useApi, useLoad } from '../app-context';
import { formatTime } from '../lib/format';
import { renderMarkdown } from '../lib/markdown';
import { href } from '../lib/router';
import { CopyLine, Link, Notice, Show, StatusBadge } from '../components/ui';
import { TokenBox } from '../components/token-box';

interface Summary {
  id: string;
  namespace: string;
  name: string;
  provider: string;
  version: string;
  description: string;
  downloads: number;
  verified: boolean;
  published_at: string;
}
interface Meta {
  limit: number;
  current_offset: number;
  next_offset?: number;
  prev_offset?: number;
}
interface Part {
  path?: string;
  readme: string;
  empty: boolean;
  inputs: { name: string; type: string; description: string; default: string; required: boolean }[];
  outputs: { name: string; description: string }[];
  resources: { name: string; type: string }[];
  dependencies: { name: string; source: string; version: string }[];
  provider_dependencies: { name: string; namespace: string; source: string; version: string }[];
}
interface Detail extends Summary {
  source: string;
  root: Part;
  submodules: Part[];
  providers: string[];
  versions: string[];
}

export function RegistryPage({ q }: { q: string }) {
  const api = useApi();
  const [text, setText] = useState(q);
  const [offset, setOffset] = useState(0);
  const [list, reload] = useLoad(
    async (signal) =>
      (
        await api.call<{ meta: Meta; modules: Summary[] }>('registry', q ? '/v1/modules/search' : '/v1/modules', {
          query: { q: q || undefined, offset, limit: 20 },
          signal,
        })
      ).data,
    [q, offset],
  );
  return (
    <div className="page">
      <h1>Registry</h1>
      <TokenBox api="registry" label="Registry" />
      <form
        className="filter-form"
        role="search"
        aria-label="Module search"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          navigate(href({ page: 'registry', q: text.trim() }));
        }}
      >
        <label htmlFor="module-q">Search modules</label>
        <input id="module-q" type="search" value={text} placeholder="vpc, network…" onChange={(e) => setText(e.target.value)} />
        <button type="submit">Search</button>
      </form>
      <Show value={list} what="the modules" onRetry={reload}>
        {(r) => (
          <>
            {r.modules.length === 0 ? <Notice>{q ? 'No module matches.' : 'No modules are published yet.'}</Notice> : null}
            <ul className="cards" aria-label="Modules">
              {r.modules.map((m) => (
                <li key={m.id} className="card">
                  <h3>
                    <Link href={href({ page: 'module', namespace: m.namespace, name: m.name, provider: m.provider, version: '' })}>
                      {m.namespace}/{m.name}/{m.provider}
                    </Link>{' '}
                    {m.verified ? <StatusBadge status="verified" /> : null}
                  </h3>
                  <p>{m.description || <em>No description.</em>}</p>
                  <small>
                    v{m.version} · {m.downloads} downloads · {formatTime(m.published_at)}
                  </small>
                </li>
              ))}
            </ul>
            <div className="pager">
              {r.meta.prev_offset !== undefined ? (
                <button type="button" onClick={() => setOffset(r.meta.prev_offset ?? 0)}>
                  Previous
                </button>
              ) : null}
              {r.meta.next_offset !== undefined ? (
                <button type="button" onClick={() => setOffset(r.meta.next_offset ?? 0)}>
                  Next
                </button>
              ) : null}
            </div>
          </>
        )}
      </Show>
    </div>
  );
}

function PartView({ part, title }: { part: Part; title: string }) {
  return (
    <section aria-label={title}>
      {part.readme ? (
        <div className="readme" /* sanitised by DOMPurify in renderMarkdown */ dangerouslySetInnerHTML={{ __html: renderMarkdown(part.readme) }} />
      ) : (
        <Notice>No README.</Notice>
      )}
      <h3>Inputs</h3>
      {part.inputs.length === 0 ? (
        <Notice>No inputs.</Notice>
      ) : (
        <div className="table-wrap">
          <table aria-label={`${title} inputs`}>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Description</th>
                <th scope="col">Default</th>
              </tr>
            </thead>
            <tbody>
              {part.inputs.map((i) => (
                <tr key={i.name}>
                  <td>
                    <code>{i.name}</code> {i.required ? <StatusBadge status="required" /> : null}
                  </td>
                  <td>
                    <code>{i.type || 'any'}</code>
                  </td>
                  <td>{i.description}</td>
                  <td>{i.default ? <code>{i.default}</code> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3>Outputs</h3>
      {part.outputs.length === 0 ? (
        <Notice>No outputs.</Notice>
      ) : (
        <ul>
          {part.outputs.map((o) => (
            <li key={o.name}>
              <code>{o.name}</code> {o.description}
            </li>
          ))}
        </ul>
      )}
      <h3>Resources</h3>
      {part.resources.length === 0 ? (
        <Notice>No resources.</Notice>
      ) : (
        <ul>
          {part.resources.map((r) => (
            <li key={`${r.type}.${r.name}`}>
              <code>
                {r.type}.{r.name}
              </code>
            </li>
          ))}
        </ul>
      )}
      {part.dependencies.length + part.provider_dependencies.length > 0 ? (
        <>
          <h3>Dependencies</h3>
          <ul>
            {part.provider_dependencies.map((d) => (
              <li key={`p-${d.name}`}>
                provider <code>{d.source || d.name}</code> {d.version}
              </li>
            ))}
            {part.dependencies.map((d) => (
              <li key={`m-${d.name}`}>
                module <code>{d.name}</code> from <code>{d.source}</code> {d.version}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

export function ModulePage(props: { namespace: string; name: string; provider: string; version: string }) {
  const api = useApi();
  const { namespace, name, provider, version } = props;
  const [detail, reload] = useLoad(
    async (signal) =>
      (await api.call<Detail>('registry', `/v1/modules/${[namespace, name, provider, ...(version ? [version] : [])].map(encodeURIComponent).join('/')}`, { signal })).data,
    [namespace, name, provider, version],
  );
  const [tab, setTab] = useState('root');
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'registry', q: '' })}>Registry</Link> / {namespace}/{name}/{provider}
      </nav>
      <h1>
        {namespace}/{name}/{provider}
      </h1>
      <Show value={detail} what="the module" onRetry={reload}>
        {(d) => {
          const part = tab === 'root' ? d.root : d.submodules.find((s) => s.path === tab);
          return (
            <>
              <p>{d.description}</p>
              <CopyLine label="source" text={`source  = "${location.host}/${d.namespace}/${d.name}/${d.provider}"`} />
              <CopyLine label="version" text={`version = "${d.version}"`} />
              <div className="field inline">
                <label htmlFor="module-version">Version</label>
                <select
                  id="module-version"
                  value={d.version}
                  onChange={(e) => navigate(href({ page: 'module', namespace, name, provider, version: e.target.value }))}
                >
                  {[...d.versions].reverse().map((v) => (
                    <option key={v} value={v}>
                      {v}
                    </option>
                  ))}
                </select>
                <small>
                  published {formatTime(d.published_at)} · {d.downloads} downloads · providers: {d.providers.join(', ')}
                </small>
              </div>
              <div role="tablist" aria-label="Module parts" className="tabs">
                {[{ path: 'root' }, ...d.submodules].map((s) => (
                  <button key={s.path} type="button" role="tab" aria-selected={tab === s.path} onClick={() => setTab(s.path ?? 'root')}>
                    {s.path === 'root' ? 'Root module' : s.path}
                  </button>
                ))}
              </div>
              {part ? <PartView part={part} title={tab === 'root' ? 'Root module' : `Submodule ${tab}`} /> : null}
            </>
          );
        }}
      </Show>
    </div>
  );
}
