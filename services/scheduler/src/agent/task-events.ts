// Task states and events as the anchor reports them (nomad/structs TaskState, TaskEvent):
// the event types `Received`, `Task Setup`, `Started`, `Terminated`, `Killing`, `Killed`,
// `Restarting`, `Not Restarting`, `Driver Failure`, `Restart Signaled`, `Sibling Task
// Failed`, with the DisplayMessage the anchor's client derives for each.

export type TaskEvent = Record<string, unknown> & { Type: string; Time: number };

export interface TaskState {
  State: 'pending' | 'running' | 'dead';
  Failed: boolean;
  Restarts: number;
  LastRestart: string;
  StartedAt: string;
  FinishedAt: string;
  Events: TaskEvent[];
  TaskHandle: null;
}

export const ZERO_TIME = '0001-01-01T00:00:00Z';
/** The anchor keeps the last 10 events of a task. */
const MAX_EVENTS = 10;

export function newTaskState(): TaskState {
  return { State: 'pending', Failed: false, Restarts: 0, LastRestart: ZERO_TIME, StartedAt: ZERO_TIME, FinishedAt: ZERO_TIME, Events: [], TaskHandle: null };
}

/** Go duration text (`15s`, `1m30s`, `500ms`) for display messages. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  let s = ms / 1000;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const sec = Number.isInteger(s) ? String(s) : s.toFixed(3).replace(/0+$/, '');
  return `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${sec}s`;
}

export function taskEvent(type: string, fields: Record<string, unknown> = {}, display = ''): TaskEvent {
  const ev: TaskEvent = {
    Type: type,
    Time: Date.now() * 1_000_000,
    Message: '',
    DisplayMessage: display,
    Details: {},
    FailsTask: false,
    RestartReason: '',
    SetupError: '',
    DriverError: '',
    ExitCode: 0,
    Signal: 0,
    KillReason: '',
    KillTimeout: 0,
    KillError: '',
    StartDelay: 0,
    DownloadError: '',
    ValidationError: '',
    DiskLimit: 0,
    FailedSibling: '',
    VaultError: '',
    TaskSignalReason: '',
    TaskSignal: '',
    DriverMessage: '',
    GenericSource: '',
    ...fields,
  };
  const details: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== '' && v !== 0 && v !== false) details[k.replace(/[A-Z]/g, (c, i: number) => (i > 0 ? '_' : '') + c.toLowerCase())] = String(v);
  ev['Details'] = details;
  return ev;
}

export function pushEvent(state: TaskState, ev: TaskEvent): void {
  state.Events.push(ev);
  if (state.Events.length > MAX_EVENTS) state.Events.splice(0, state.Events.length - MAX_EVENTS);
}
