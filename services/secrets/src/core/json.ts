// Stored secrets are canonical JSON text. Reads splice that text into the response
// verbatim instead of parsing and re-encoding it (issue 3, item 9: keep per-request work
// small). `stringifyWithRaw` runs the native JSON.stringify with placeholders and then
// substitutes the raw texts.

let collecting: string[] | null = null;

export class RawJson {
  constructor(readonly text: string) {}
  toJSON(): unknown {
    if (collecting) {
      collecting.push(this.text);
      return `\u0000raw${collecting.length - 1}\u0000`;
    }
    return JSON.parse(this.text) as unknown;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof RawJson);
}

const PLACEHOLDER = /"\\u0000raw(\d+)\\u0000"/g;

/** JSON.stringify, with the text of every RawJson spliced in verbatim. */
export function stringifyWithRaw(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  // Plain objects are written member by member, so a RawJson among their members (or
  // theirs, recursively) is spliced directly; the placeholder pass below (a toJSON hook
  // takes V8's JSON.stringify off its fast path) is left to arrays and other values.
  if (isPlainObject(value) && Object.getPrototypeOf(value) === Object.prototype && typeof value['toJSON'] !== 'function') {
    let out = '';
    for (const key of Object.keys(value)) {
      const member = value[key];
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
      out += `${out === '' ? '{' : ','}${JSON.stringify(key)}:${stringifyWithRaw(member)}`;
    }
    return out === '' ? '{}' : `${out}}`;
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const raws: string[] = [];
  collecting = raws;
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'null';
  } finally {
    collecting = null;
  }
  if (raws.length === 0) return text;
  return text.replace(PLACEHOLDER, (_m, i: string) => raws[Number(i)] as string);
}
