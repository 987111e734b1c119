// Scheduler (issue 32, item 3): jobs with status and a filter box (the API's own filter
// expressions), a job page (task groups, allocations, versions with diffs, deployments
// with progress) kept live by blocking queries, allocations, nodes, evaluations, and the
// actions the API has. Shapes: ../shared/reference/workload-scheduler-nomad-api.md.
// Endpoints a server does not have yet (scale, dispatch, client logs) answer 404; the
// console says so in place of the feature.
import { useEffect, useState, type ReactNode } from 'react';
import { navigate, useApi, useTokenVersion, type Loaded } from '../app-context';
import type { Query } from '../lib/api-client';
import { ApiError, describeError } from '../lib/api-errors';
import { nextBlockingIndex, retryDelayMs } from '../lib/blocking';
import { formatBytes, formatTime, shortId } from '../lib/format';
import { diffJobs } from '../lib/job-diff';
import { href } from '../lib/router';
import { ActionForm, ErrorMessage, Field, KeyValues, Link, Notice, Show, StatusBadge } from '../components/ui';
import { TokenBox } from '../components/token-box';

/** How long one blocking request waits (the server adds up to wait/16). */
const WAIT = '30s';

/**
 * Keeps `path` live with blocking queries: the first request answers at once, every next
 * one carries the last X-Nomad-Index and returns when something changed. Errors show,
 * then it retries with back-off; 400 and 404 stop it (a bad filter, an endpoint this
 * server does not have).
 */
export function useBlocking<T>(path: string, query: Query = {}): Loaded<T> & { live: boolean } {
  const api = useApi();
  const tokens = useTokenVersion();
  const [state, setState] = useState<Loaded<T> & { live: boolean }>({ state: 'loading', live: false });
  const key = JSON.stringify([path, query, tokens]);
  useEffect(() => {
    const ctrl = new AbortController();
    setState({ state: 'loading', live: false });
    void (async () => {
      let index = 0;
      let failures = 0;
      while (!ctrl.signal.aborted) {
        try {
          const r = await api.call<T>('scheduler', path, { query: { ...query, ...(index > 0 ? { index, wait: WAIT } : {}) }, signal: ctrl.signal });
          if (ctrl.signal.aborted) return;
          failures = 0;
          setState({ state: 'ready', data: r.data, live: true });
          index = nextBlockingIndex(index, r.headers.get('X-Nomad-Index') ?? r.headers.get('X-Scheduler-Index'));
        } catch (err) {
          if (ctrl.signal.aborted) return;
          const status = err instanceof ApiError ? err.status : undefined;
          setState({ state: 'error', message: describeError(err), status, live: false });
          if (status === 400 || status === 404 || status === 0) return;
          failures += 1;
          await new Promise((r) => setTimeout(r, retryDelayMs(failures)));
        }
      }
    })();
    return () => ctrl.abort();
    // `key` stands for path, query and the token.
  }, [key]);
  return state;
}

function LiveBadge({ live }: { live: boolean }) {
  return (
    <span className={live ? 'live on' : 'live'} title={live ? 'Updates as the scheduler changes (blocking queries)' : 'Not updating'}>
      {live ? 'live' : 'paused'}
    </span>
  );
}

export function SchedulerNav({ current }: { current: string }) {
  const items: [string, string][] = [
    ['jobs', href({ page: 'jobs', filter: '', namespace: '' })],
    ['nodes', href({ page: 'nodes' })],
    ['evaluations', href({ page: 'evaluations' })],
  ];
  return (
    <>
      <nav aria-label="Scheduler" className="subnav">
        {items.map(([name, link]) => (
          <Link key={name} href={link} aria-current={current === name ? 'page' : undefined}>
            {name[0]?.toUpperCase() + name.slice(1)}
          </Link>
        ))}
      </nav>
      <TokenBox api="scheduler" label="Scheduler ACL" />
    </>
  );
}

interface JobStub {
  ID: string;
  Name: string;
  Namespace: string;
  Type: string;
  Status: string;
  Priority: number;
  Stop: boolean;
  Datacenters?: string[];
  JobSummary?: { Summary?: Record<string, Record<string, number>> };
  SubmitTime?: number;
}

function summaryText(s: JobStub['JobSummary']): string {
  const totals: Record<string, number> = {};
  for (const g of Object.values(s?.Summary ?? {})) for (const [k, v] of Object.entries(g)) totals[k] = (totals[k] ?? 0) + (typeof v === 'number' ? v : 0);
  const parts = ['Running', 'Queued', 'Starting', 'Failed', 'Complete', 'Lost'].filter((k) => (totals[k] ?? 0) > 0).map((k) => `${totals[k]} ${k.toLowerCase()}`);
  return parts.join(', ') || '—';
}

export function JobsPage({ filter, namespace }: { filter: string; namespace: string }) {
  const [text, setText] = useState(filter);
  const jobs = useBlocking<JobStub[]>('/v1/jobs', { filter, namespace: namespace || '*' });
  useEffect(() => setText(filter), [filter]);
  return (
    <div className="page">
      <h1>Scheduler</h1>
      <SchedulerNav current="jobs" />
      <h2>
        Jobs <LiveBadge live={jobs.live} />
      </h2>
      <form
        className="filter-form"
        aria-label="Filter jobs"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(href({ page: 'jobs', filter: text.trim(), namespace }), { replace: true });
        }}
      >
        <label htmlFor="job-filter">Filter expression</label>
        <input id="job-filter" value={text} placeholder={'Status == "running" and Type == "service"'} onChange={(e) => setText(e.target.value)} spellCheck={false} />
        <button type="submit">Apply</button>
        {filter ? (
          <button type="button" onClick={() => navigate(href({ page: 'jobs', filter: '', namespace }), { replace: true })}>
            Clear
          </button>
        ) : null}
      </form>
      {jobs.state === 'error' ? (
        <ErrorMessage title={jobs.status === 400 ? 'The filter was refused' : 'Could not load the jobs'} message={jobs.message} />
      ) : jobs.state === 'loading' ? (
        <Show value={jobs} what="the jobs">
          {() => null}
        </Show>
      ) : jobs.data.length === 0 ? (
        <Notice>{filter ? 'No job matches this filter.' : 'No jobs yet.'}</Notice>
      ) : (
        <div className="table-wrap">
          <table aria-label="Jobs">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Namespace</th>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">Priority</th>
                <th scope="col">Allocations</th>
              </tr>
            </thead>
            <tbody>
              {jobs.data.map((j) => (
                <tr key={`${j.Namespace}/${j.ID}`}>
                  <td>
                    <Link href={href({ page: 'job', id: j.ID, namespace: j.Namespace })}>{j.Name || j.ID}</Link>
                  </td>
                  <td>{j.Namespace}</td>
                  <td>{j.Type}</td>
                  <td>
                    <StatusBadge status={j.Stop && j.Status !== 'dead' ? 'stopping' : j.Status} />
                  </td>
                  <td>{j.Priority}</td>
                  <td>{summaryText(j.JobSummary)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <RunJob />
    </div>
  );
}

function RunJob() {
  const api = useApi();
  const [open, setOpen] = useState(false);
  const [spec, setSpec] = useState('');
  if (!open) {
    return (
      <p>
        <button type="button" onClick={() => setOpen(true)}>
          Run a job…
        </button>
      </p>
    );
  }
  return (
    <section aria-labelledby="run-job">
      <h2 id="run-job">Run a job</h2>
      <ActionForm
        label="Run a job"
        submit="Submit job"
        action={async () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(spec) as unknown;
          } catch (err) {
            throw new Error(`the job must be JSON (the API's job specification): ${(err as Error).message}`);
          }
          const job = parsed && typeof parsed === 'object' && 'Job' in parsed ? (parsed as { Job: unknown }).Job : parsed;
          const r = await api.call<{ EvalID?: string }>('scheduler', '/v1/jobs', { method: 'PUT', body: { Job: job } });
          setSpec('');
          return `Submitted${r.data?.EvalID ? `, evaluation ${shortId(r.data.EvalID)}` : ''}.`;
        }}
      >
        <Field label="Job (JSON)" value={spec} onChange={setSpec} multiline={12} required placeholder={'{"ID": "web", "Name": "web", "Type": "service", "Datacenters": ["dc1"], "TaskGroups": [...]}'} />
      </ActionForm>
    </section>
  );
}

interface Task {
  Name: string;
  Driver: string;
  Config?: Record<string, unknown>;
  Resources?: { CPU?: number; MemoryMB?: number };
}
interface TaskGroup {
  Name: string;
  Count: number;
  Tasks?: Task[];
}
interface Job extends JobStub {
  Version: number;
  TaskGroups?: TaskGroup[];
  ParameterizedJob?: unknown;
}
interface AllocStub {
  ID: string;
  Name: string;
  NodeID: string;
  NodeName?: string;
  JobID: string;
  TaskGroup: string;
  ClientStatus: string;
  DesiredStatus: string;
  JobVersion?: number;
  CreateTime?: number;
  ModifyTime?: number;
}
interface DeploymentGroup {
  DesiredTotal: number;
  PlacedAllocs: number;
  HealthyAllocs: number;
  UnhealthyAllocs: number;
  DesiredCanaries?: number;
  Promoted?: boolean;
}
interface Deployment {
  ID: string;
  JobVersion: number;
  Status: string;
  StatusDescription: string;
  TaskGroups?: Record<string, DeploymentGroup>;
}

export function JobPage({ id, namespace }: { id: string; namespace: string }) {
  const base = `/v1/job/${encodeURIComponent(id)}`;
  const q = { namespace };
  const job = useBlocking<Job>(base, q);
  const allocs = useBlocking<AllocStub[]>(`${base}/allocations`, q);
  const deployments = useBlocking<Deployment[]>(`${base}/deployments`, q);
  const versions = useBlocking<{ Versions: Job[] }>(`${base}/versions`, q);
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'jobs', filter: '', namespace: '' })}>Jobs</Link> / {id}
      </nav>
      <h1>
        Job {id} <LiveBadge live={job.live} />
      </h1>
      <TokenBox api="scheduler" label="Scheduler ACL" />
      <Show value={job} what="the job">
        {(j) => (
          <>
            <KeyValues
              rows={[
                ['Status', <StatusBadge key="s" status={j.Stop && j.Status !== 'dead' ? 'stopping' : j.Status} />],
                ['Type', j.Type],
                ['Namespace', j.Namespace],
                ['Version', String(j.Version)],
                ['Priority', String(j.Priority)],
                ['Datacenters', (j.Datacenters ?? []).join(', ')],
                ['Submitted', formatTime(j.SubmitTime)],
              ]}
            />
            <JobActions job={j} />
            <section aria-labelledby="groups-title">
              <h2 id="groups-title">Task groups</h2>
              <div className="table-wrap">
                <table aria-label="Task groups">
                  <thead>
                    <tr>
                      <th scope="col">Group</th>
                      <th scope="col">Count</th>
                      <th scope="col">Tasks</th>
                      <th scope="col">Scale</th>
                    </tr>
                  </thead>
                  <tbody>
                    {(j.TaskGroups ?? []).map((g) => (
                      <tr key={g.Name}>
                        <td>{g.Name}</td>
                        <td>{g.Count}</td>
                        <td>
                          {(g.Tasks ?? []).map((t) => (
                            <div key={t.Name}>
                              {t.Name} <small>({t.Driver}{t.Resources?.CPU ? `, ${t.Resources.CPU} MHz` : ''}{t.Resources?.MemoryMB ? `, ${t.Resources.MemoryMB} MiB` : ''})</small>
                            </div>
                          ))}
                        </td>
                        <td>
                          <ScaleForm key={`${g.Name}-${g.Count}`} job={j} group={g} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </section>
          </>
        )}
      </Show>
      <section aria-labelledby="allocs-title">
        <h2 id="allocs-title">Allocations</h2>
        <Show value={allocs} what="the allocations">
          {(list) => <AllocTable allocs={list} />}
        </Show>
      </section>
      <section aria-labelledby="deploy-title">
        <h2 id="deploy-title">Deployments</h2>
        <Show value={deployments} what="the deployments">
          {(list) => (list.length === 0 ? <Notice>No deployments.</Notice> : <>{list.map((d) => <DeploymentView key={d.ID} d={d} />)}</>)}
        </Show>
      </section>
      <section aria-labelledby="versions-title">
        <h2 id="versions-title">Versions</h2>
        <Show value={versions} what="the versions">
          {(v) => <VersionsView versions={v.Versions ?? []} />}
        </Show>
      </section>
    </div>
  );
}

function JobActions({ job }: { job: Job }) {
  const api = useApi();
  const q = { namespace: job.Namespace };
  const path = `/v1/job/${encodeURIComponent(job.ID)}`;
  return (
    <div className="actions-row">
      {!job.Stop ? (
        <ActionForm
          label="Stop job"
          submit="Stop job"
          danger
          className="inline-form"
          action={async () => {
            if (!window.confirm(`Stop job ${job.ID}?`)) return;
            await api.call('scheduler', path, { method: 'DELETE', query: q });
            return 'Stop requested.';
          }}
        />
      ) : (
        <ActionForm
          label="Start job"
          submit="Start job again"
          className="inline-form"
          action={async () => {
            const { Version: _v, ...rest } = job;
            await api.call('scheduler', path, { method: 'PUT', query: q, body: { Job: { ...rest, Stop: false } } });
            return 'Start requested.';
          }}
        />
      )}
      {job.ParameterizedJob ? (
        <ActionForm
          label="Dispatch job"
          submit="Dispatch"
          className="inline-form"
          action={async () => {
            try {
              const r = await api.call<{ DispatchedJobID?: string }>('scheduler', `${path}/dispatch`, { method: 'POST', query: q, body: {} });
              return `Dispatched ${r.data?.DispatchedJobID ?? ''}`;
            } catch (err) {
              if (err instanceof ApiError && err.status === 404) throw new Error('This scheduler does not offer dispatch yet (the endpoint answered 404).');
              throw err;
            }
          }}
        />
      ) : null}
    </div>
  );
}

function ScaleForm({ job, group }: { job: Job; group: TaskGroup }) {
  const api = useApi();
  const [count, setCount] = useState(String(group.Count));
  return (
    <ActionForm
      label={`Scale ${group.Name}`}
      submit="Scale"
      className="inline-form"
      action={async () => {
        const n = Number(count);
        if (!Number.isInteger(n) || n < 0) throw new Error('the count must be a whole number, 0 or more');
        try {
          await api.call('scheduler', `/v1/job/${encodeURIComponent(job.ID)}/scale`, {
            method: 'POST',
            query: { namespace: job.Namespace },
            body: { Count: n, Target: { Job: job.ID, Group: group.Name }, Message: 'scaled from the console' },
          });
        } catch (err) {
          if (err instanceof ApiError && err.status === 404) throw new Error('This scheduler does not offer scaling yet (the endpoint answered 404).');
          throw err;
        }
        return `Scaling ${group.Name} to ${n}.`;
      }}
    >
      <label className="visually-hidden" htmlFor={`scale-${group.Name}`}>
        Count for {group.Name}
      </label>
      <input id={`scale-${group.Name}`} className="count-input" type="number" min={0} value={count} onChange={(e) => setCount(e.target.value)} />
    </ActionForm>
  );
}

function AllocTable({ allocs }: { allocs: AllocStub[] }) {
  if (allocs.length === 0) return <Notice>No allocations.</Notice>;
  return (
    <div className="table-wrap">
      <table aria-label="Allocations">
        <thead>
          <tr>
            <th scope="col">ID</th>
            <th scope="col">Name</th>
            <th scope="col">Node</th>
            <th scope="col">Client status</th>
            <th scope="col">Desired</th>
            <th scope="col">Version</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {allocs.map((a) => (
            <tr key={a.ID}>
              <td>
                <Link href={href({ page: 'allocation', id: a.ID })}>{shortId(a.ID)}</Link>
              </td>
              <td>{a.Name}</td>
              <td>{a.NodeID ? <Link href={href({ page: 'node', id: a.NodeID })}>{a.NodeName || shortId(a.NodeID)}</Link> : '—'}</td>
              <td>
                <StatusBadge status={a.ClientStatus} />
              </td>
              <td>{a.DesiredStatus}</td>
              <td>{a.JobVersion ?? '—'}</td>
              <td>{formatTime(a.CreateTime)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DeploymentView({ d }: { d: Deployment }) {
  const api = useApi();
  const needsPromotion = Object.values(d.TaskGroups ?? {}).some((g) => (g.DesiredCanaries ?? 0) > 0 && !g.Promoted);
  return (
    <article className="card" aria-label={`Deployment ${shortId(d.ID)}`}>
      <h3>
        {shortId(d.ID)} <StatusBadge status={d.Status} /> <small>version {d.JobVersion}</small>
      </h3>
      <p>{d.StatusDescription}</p>
      {Object.entries(d.TaskGroups ?? {}).map(([name, g]) => (
        <div key={name} className="progress-row">
          <span>{name}</span>
          <progress max={Math.max(1, g.DesiredTotal)} value={g.HealthyAllocs} aria-label={`${name}: ${g.HealthyAllocs} of ${g.DesiredTotal} healthy`} />
          <small>
            {g.HealthyAllocs}/{g.DesiredTotal} healthy, {g.PlacedAllocs} placed, {g.UnhealthyAllocs} unhealthy
            {g.DesiredCanaries ? `, ${g.DesiredCanaries} canaries${g.Promoted ? ' (promoted)' : ''}` : ''}
          </small>
        </div>
      ))}
      {needsPromotion && d.Status === 'running' ? (
        <ActionForm
          label="Promote deployment"
          submit="Promote canaries"
          className="inline-form"
          action={async () => {
            await api.call('scheduler', `/v1/deployment/promote/${encodeURIComponent(d.ID)}`, { method: 'POST', body: { DeploymentID: d.ID, All: true } });
            return 'Promoted.';
          }}
        />
      ) : null}
    </article>
  );
}

function VersionsView({ versions }: { versions: Job[] }) {
  if (versions.length === 0) return <Notice>No versions.</Notice>;
  return (
    <ol className="versions" aria-label="Job versions">
      {versions.map((v, i) => {
        const older = versions[i + 1];
        const changes = older ? diffJobs(older, v) : [];
        return (
          <li key={v.Version}>
            <details open={i === 0}>
              <summary>
                Version {v.Version} <small>{formatTime(v.SubmitTime)}</small> {older ? <small>({changes.length} change{changes.length === 1 ? '' : 's'} from version {older.Version})</small> : <small>(first version)</small>}
              </summary>
              {changes.length > 0 ? (
                <table className="diff" aria-label={`Changes in version ${v.Version}`}>
                  <tbody>
                    {changes.map((c) => (
                      <tr key={c.path} className={`diff-${c.kind}`}>
                        <td>{c.kind === 'added' ? '+' : c.kind === 'deleted' ? '−' : '±'}</td>
                        <td>
                          <code>{c.path}</code>
                        </td>
                        <td>
                          {c.before !== undefined ? <del>{c.before}</del> : null} {c.after !== undefined ? <ins>{c.after}</ins> : null}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : older ? (
                <p>No changes to the specification.</p>
              ) : null}
            </details>
          </li>
        );
      })}
    </ol>
  );
}

interface TaskState {
  State: string;
  Failed: boolean;
  Restarts?: number;
  StartedAt?: string | null;
  FinishedAt?: string | null;
  Events?: { Type: string; Time: number; DisplayMessage?: string; Message?: string }[] | null;
}
interface Allocation extends AllocStub {
  Namespace: string;
  TaskStates?: Record<string, TaskState> | null;
  DesiredDescription?: string;
}

export function AllocationPage({ id }: { id: string }) {
  const api = useApi();
  const alloc = useBlocking<Allocation>(`/v1/allocation/${encodeURIComponent(id)}`);
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'jobs', filter: '', namespace: '' })}>Jobs</Link> / allocation {shortId(id)}
      </nav>
      <h1>
        Allocation {shortId(id)} <LiveBadge live={alloc.live} />
      </h1>
      <Show value={alloc} what="the allocation">
        {(a) => (
          <>
            <KeyValues
              rows={[
                ['Name', a.Name],
                ['Job', <Link key="j" href={href({ page: 'job', id: a.JobID, namespace: a.Namespace })}>{a.JobID}</Link>],
                ['Task group', a.TaskGroup],
                ['Node', a.NodeID ? <Link key="n" href={href({ page: 'node', id: a.NodeID })}>{a.NodeName || shortId(a.NodeID)}</Link> : '—'],
                ['Client status', <StatusBadge key="c" status={a.ClientStatus} />],
                ['Desired status', `${a.DesiredStatus}${a.DesiredDescription ? ` (${a.DesiredDescription})` : ''}`],
              ]}
            />
            {a.DesiredStatus === 'run' ? (
              <ActionForm
                label="Stop allocation"
                submit="Stop allocation"
                danger
                className="inline-form"
                action={async () => {
                  await api.call('scheduler', `/v1/allocation/${encodeURIComponent(a.ID)}/stop`, { method: 'POST' });
                  return 'Stop requested; the scheduler places a replacement.';
                }}
              />
            ) : null}
            <h2>Tasks</h2>
            {Object.keys(a.TaskStates ?? {}).length === 0 ? <Notice>No task has reported a state yet.</Notice> : null}
            {Object.entries(a.TaskStates ?? {}).map(([name, t]) => (
              <article key={name} className="card" aria-label={`Task ${name}`}>
                <h3>
                  {name} <StatusBadge status={t.Failed ? 'failed' : t.State} /> <small>{t.Restarts ?? 0} restarts</small>
                </h3>
                <ul className="events">
                  {(t.Events ?? []).map((e, i) => (
                    <li key={i}>
                      <time>{formatTime(e.Time)}</time> <strong>{e.Type}</strong> {e.DisplayMessage ?? e.Message ?? ''}
                    </li>
                  ))}
                </ul>
                <TaskLogs alloc={a.ID} task={name} />
              </article>
            ))}
          </>
        )}
      </Show>
    </div>
  );
}

function TaskLogs({ alloc, task }: { alloc: string; task: string }) {
  const api = useApi();
  const [logs, setLogs] = useState<{ text?: string; error?: string }>();
  if (!logs) {
    return (
      <button
        type="button"
        onClick={() => {
          setLogs({});
          api
            .call<{ Data?: string } | string>('scheduler', `/v1/client/fs/logs/${encodeURIComponent(alloc)}`, { query: { task, type: 'stdout', plain: true, origin: 'end', offset: 50000 } })
            .then(
              (r) => setLogs({ text: typeof r.data === 'string' ? r.data : JSON.stringify(r.data) }),
              (err: unknown) =>
                setLogs({
                  error: err instanceof ApiError && err.status === 404 ? 'Logs need the scheduler’s client agent, which this server does not run yet (the logs endpoint answered 404).' : describeError(err),
                }),
            );
        }}
      >
        Show logs
      </button>
    );
  }
  if (logs.error) return <ErrorMessage title="Logs" message={logs.error} />;
  if (logs.text === undefined) return <p role="status">Loading logs…</p>;
  return <pre className="logs">{logs.text || '(empty)'}</pre>;
}

interface NodeStub {
  ID: string;
  Name: string;
  Datacenter: string;
  NodeClass?: string;
  Status: string;
  SchedulingEligibility: string;
  Drain: boolean;
  NodeResources?: { Cpu?: { CpuShares?: number }; Memory?: { MemoryMB?: number }; Disk?: { DiskMB?: number } };
}

function NodeResources({ n }: { n: NodeStub }): ReactNode {
  const r = n.NodeResources;
  if (!r) return '—';
  return `${r.Cpu?.CpuShares ?? 0} MHz, ${formatBytes((r.Memory?.MemoryMB ?? 0) * 1024 * 1024)}, disk ${formatBytes((r.Disk?.DiskMB ?? 0) * 1024 * 1024)}`;
}

export function NodesPage() {
  const nodes = useBlocking<NodeStub[]>('/v1/nodes', { resources: true });
  return (
    <div className="page">
      <h1>Scheduler</h1>
      <SchedulerNav current="nodes" />
      <h2>
        Nodes <LiveBadge live={nodes.live} />
      </h2>
      <Show value={nodes} what="the nodes">
        {(list) =>
          list.length === 0 ? (
            <Notice>No client nodes have registered.</Notice>
          ) : (
            <div className="table-wrap">
              <table aria-label="Nodes">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Datacenter</th>
                    <th scope="col">Status</th>
                    <th scope="col">Eligibility</th>
                    <th scope="col">Resources</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((n) => (
                    <tr key={n.ID}>
                      <td>
                        <Link href={href({ page: 'node', id: n.ID })}>{n.Name || shortId(n.ID)}</Link>
                      </td>
                      <td>{n.Datacenter}</td>
                      <td>
                        <StatusBadge status={n.Status} />
                        {n.Drain ? ' draining' : ''}
                      </td>
                      <td>{n.SchedulingEligibility}</td>
                      <td>
                        <NodeResources n={n} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
    </div>
  );
}

export function NodePage({ id }: { id: string }) {
  const api = useApi();
  const node = useBlocking<NodeStub>(`/v1/node/${encodeURIComponent(id)}`);
  const allocs = useBlocking<AllocStub[]>(`/v1/node/${encodeURIComponent(id)}/allocations`);
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href={href({ page: 'nodes' })}>Nodes</Link> / {shortId(id)}
      </nav>
      <Show value={node} what="the node">
        {(n) => (
          <>
            <h1>
              Node {n.Name} <LiveBadge live={node.live} />
            </h1>
            <KeyValues
              rows={[
                ['ID', <code key="i">{n.ID}</code>],
                ['Datacenter', n.Datacenter],
                ['Class', n.NodeClass || '—'],
                ['Status', <StatusBadge key="s" status={n.Status} />],
                ['Eligibility', n.SchedulingEligibility],
                ['Draining', n.Drain ? 'yes' : 'no'],
                ['Resources', <NodeResources key="r" n={n} />],
              ]}
            />
            <ActionForm
              label="Toggle eligibility"
              submit={n.SchedulingEligibility === 'eligible' ? 'Mark ineligible' : 'Mark eligible'}
              className="inline-form"
              action={async () => {
                await api.call('scheduler', `/v1/node/${encodeURIComponent(n.ID)}/eligibility`, {
                  method: 'POST',
                  body: { Eligibility: n.SchedulingEligibility === 'eligible' ? 'ineligible' : 'eligible' },
                });
              }}
            />
          </>
        )}
      </Show>
      <h2>Allocations</h2>
      <Show value={allocs} what="the node's allocations">
        {(list) => <AllocTable allocs={list} />}
      </Show>
    </div>
  );
}

interface Evaluation {
  ID: string;
  JobID: string;
  Namespace: string;
  Type: string;
  TriggeredBy: string;
  Status: string;
  StatusDescription?: string;
  CreateTime?: number;
}

export function EvaluationsPage() {
  const evals = useBlocking<Evaluation[]>('/v1/evaluations', { reverse: true, per_page: 100 });
  return (
    <div className="page">
      <h1>Scheduler</h1>
      <SchedulerNav current="evaluations" />
      <h2>
        Evaluations <LiveBadge live={evals.live} />
      </h2>
      <Show value={evals} what="the evaluations">
        {(list) =>
          list.length === 0 ? (
            <Notice>No evaluations.</Notice>
          ) : (
            <div className="table-wrap">
              <table aria-label="Evaluations">
                <thead>
                  <tr>
                    <th scope="col">ID</th>
                    <th scope="col">Job</th>
                    <th scope="col">Triggered by</th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((e) => (
                    <tr key={e.ID}>
                      <td>
                        <code>{shortId(e.ID)}</code>
                      </td>
                      <td>
                        <Link href={href({ page: 'job', id: e.JobID, namespace: e.Namespace })}>{e.JobID}</Link>
                      </td>
                      <td>{e.TriggeredBy}</td>
                      <td>
                        <StatusBadge status={e.Status} /> {e.StatusDescription ? <small>{e.StatusDescription}</small> : null}
                      </td>
                      <td>{formatTime(e.CreateTime)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
    </div>
  );
}
