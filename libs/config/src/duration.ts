// Go-style durations (`time.ParseDuration`), as the anchors' HCL and API fields use them
// (`graceful_shutdown_wait_duration = "10s"`, Nomad's `wait=1m30s`, Vault TTLs). A bare
// integer means seconds, as Vault's `parseutil.ParseDurationSecond` accepts, unless
// `bareSeconds: false` asks for Go's own rule (a number other than 0 needs a unit).

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const SEGMENT = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

export interface DurationOptions {
  /** A bare integer is a number of seconds (default true, Vault); false: Go's
   * time.ParseDuration, where only `0` may go without a unit. */
  bareSeconds?: boolean;
}

/**
 * Parses `10s`, `1m30s`, `300ms`, `1h`, `1.5h`, `0` or `45` (seconds) into milliseconds.
 * Sub-millisecond units give fractional milliseconds. Throws a `RangeError` naming the
 * input and what is wrong with it.
 */
export function parseDuration(input: string, options: DurationOptions = {}): number {
  const text = input.trim();
  if (text === '') throw new RangeError('invalid duration "": empty string');
  if (/^\d+$/.test(text) && options.bareSeconds !== false) return Number(text) * 1000;
  if (text.startsWith('-')) {
    throw new RangeError(`invalid duration ${JSON.stringify(input)}: must not be negative`);
  }
  const body = text.startsWith('+') ? text.slice(1) : text;
  if (body === '0') return 0;

  let total = 0;
  let pos = 0;
  SEGMENT.lastIndex = 0;
  while (pos < body.length) {
    SEGMENT.lastIndex = pos;
    const m = SEGMENT.exec(body);
    if (!m) {
      const rest = body.slice(pos);
      const reason = /^(\d+(?:\.\d*)?|\.\d+)$/.test(rest)
        ? `missing unit after ${JSON.stringify(rest)} (use ns, us, ms, s, m or h)`
        : /^(\d+(?:\.\d*)?|\.\d+)/.test(rest)
          ? `unknown unit in ${JSON.stringify(rest)} (use ns, us, ms, s, m or h)`
          : `unexpected ${JSON.stringify(rest)} (expected a number followed by ns, us, ms, s, m or h)`;
      throw new RangeError(`invalid duration ${JSON.stringify(input)}: ${reason}`);
    }
    const [, amount, unit] = m;
    total += Number(amount) * (UNIT_MS[unit as string] as number);
    pos = SEGMENT.lastIndex;
  }
  if (!Number.isFinite(total)) {
    throw new RangeError(`invalid duration ${JSON.stringify(input)}: too large`);
  }
  return total;
}
