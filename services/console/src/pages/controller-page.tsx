// Controller (issue 32, item 6): the controller's and its workers' health, with each
// worker's state and session counts, from the controller's API (GET /v1/workers,
// GET /v1/sessions; docs/controller.md). The gateway carries that API under /controller/.
// The ops listener's /health is not behind the gateway (docs/operations.md), so the
// controller counts as healthy here when its API answers.
import { useEffect } from 'react';
import { useApi, useLoad } from '../app-context';
import { formatTime } from '../lib/format';
import { KeyValues, Notice, Show, StatusBadge } from '../components/ui';
import { TokenBox } from '../components/token-box';

interface Worker {
  name: string;
  description?: string;
  controller_name?: string;
  connected: boolean;
  active_session_count: number;
  last_seen_time?: string;
}
interface Session {
  id: string;
  worker_name: string;
  status: string;
}

/** Sessions per worker and status, for the table. */
export function sessionCounts(sessions: readonly Session[]): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const s of sessions) {
    const row = out.get(s.worker_name) ?? {};
    row[s.status] = (row[s.status] ?? 0) + 1;
    out.set(s.worker_name, row);
  }
  return out;
}

export function ControllerPage() {
  const api = useApi();
  const [data, reload] = useLoad(async (signal) => {
    const [workers, sessions] = await Promise.all([
      api.call<{ items: Worker[] }>('controller', '/v1/workers', { signal }),
      api.call<{ items: Session[] }>('controller', '/v1/sessions', { signal }),
    ]);
    return { workers: workers.data.items ?? [], sessions: sessions.data.items ?? [], at: new Date().toISOString() };
  }, []);
  // Health is a poll: the controller's API has no blocking queries.
  useEffect(() => {
    const t = setInterval(reload, 5000);
    return () => clearInterval(t);
  }, [reload]);
  return (
    <div className="page">
      <h1>Controller</h1>
      <TokenBox api="controller" label="Controller API" />
      <Show value={data} what="the controller's workers" onRetry={reload}>
        {(d) => {
          const counts = sessionCounts(d.sessions);
          const connected = d.workers.filter((w) => w.connected).length;
          return (
            <>
              <KeyValues
                rows={[
                  ['Controller API', <StatusBadge key="c" status="healthy" />],
                  ['Workers connected', `${connected} of ${d.workers.length}`],
                  ['Sessions', String(d.sessions.length)],
                  ['Checked', formatTime(d.at)],
                ]}
              />
              {d.workers.length === 0 ? (
                <Notice>No worker has connected to this controller.</Notice>
              ) : (
                <div className="table-wrap">
                  <table aria-label="Workers">
                    <thead>
                      <tr>
                        <th scope="col">Worker</th>
                        <th scope="col">State</th>
                        <th scope="col">Active sessions</th>
                        <th scope="col">Sessions by status</th>
                        <th scope="col">Controller</th>
                        <th scope="col">Last seen</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.workers.map((w) => (
                        <tr key={w.name}>
                          <td>
                            {w.name}
                            {w.description ? <small> {w.description}</small> : null}
                          </td>
                          <td>
                            <StatusBadge status={w.connected ? 'connected' : 'disconnected'} />
                          </td>
                          <td>{w.active_session_count}</td>
                          <td>
                            {Object.entries(counts.get(w.name) ?? {})
                              .map(([s, n]) => `${n} ${s}`)
                              .join(', ') || '—'}
                          </td>
                          <td>{w.controller_name ?? '—'}</td>
                          <td>{formatTime(w.last_seen_time)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </>
          );
        }}
      </Show>
    </div>
  );
}
