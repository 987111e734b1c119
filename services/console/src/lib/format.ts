// Small display helpers shared by the pages.
export function formatBytes(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** ISO string, epoch seconds, milliseconds or nanoseconds (Nomad's SubmitTime) -> local time. */
export function formatTime(value: string | number | undefined | null): string {
  if (value === undefined || value === null || value === '' || value === 0) return '—';
  let ms: number;
  if (typeof value === 'number') {
    ms = value > 1e17 ? value / 1e6 : value > 1e14 ? value / 1e3 : value > 1e11 ? value : value * 1000;
  } else {
    ms = Date.parse(value);
  }
  if (!Number.isFinite(ms)) return String(value);
  return new Date(ms).toLocaleString();
}

/** Shortened UUID, as Nomad's UI shows allocation and evaluation IDs. */
export function shortId(id: string | undefined): string {
  return id ? id.slice(0, 8) : '—';
}
