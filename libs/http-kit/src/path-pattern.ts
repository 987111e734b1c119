// Pattern syntax of a PathSpec: `/`-separated segments; `:name` matches one non-empty
// segment; `+name` matches one or more segments, slashes included, anywhere in the
// pattern (greedy: in `job/+id/versions` the ID is everything before the last
// `/versions`, which is how Nomad finds job IDs that contain slashes, such as a periodic
// job's children); a trailing `*name` matches the rest of the path (slashes included,
// possibly empty), which is what KV paths such as `data/*path` need.

export interface CompiledPattern {
  pattern: string;
  regex: RegExp;
  /** Parameter names in capture-group order. */
  paramNames: string[];
  /** Literal prefix before the first parameter (used by help to find paths "under" a path). */
  literalPrefix: string;
  hasGlob: boolean;
  /** OpenAPI form: `/data/{path}`. */
  openApiPath: string;
  /** Vault's regex form shown in help text: `^data/(?P<path>.*)$`. */
  vaultRegex: string;
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function normalizePattern(pattern: string): string {
  return pattern.replace(/^\/+/, '').replace(/\/+$/, '');
}

export function compilePattern(rawPattern: string): CompiledPattern {
  const pattern = normalizePattern(rawPattern);
  const segments = pattern === '' ? [] : pattern.split('/');
  const paramNames: string[] = [];
  let source = '';
  let vault = '';
  const openApi: string[] = [];
  const literal: string[] = [];
  let seenParam = false;
  let hasGlob = false;
  segments.forEach((segment, index) => {
    const isLast = index === segments.length - 1;
    const sep = index === 0 ? '' : '/';
    if (segment.startsWith('*')) {
      const name = segment.slice(1);
      if (!isLast) throw new Error(`pattern "${rawPattern}": a *glob must be the last segment`);
      if (!NAME_RE.test(name)) throw new Error(`pattern "${rawPattern}": invalid glob name "${name}"`);
      paramNames.push(name);
      // The separator before the glob is optional so that `data` matches `data/*path` with
      // an empty path (LIST secret/metadata is sent with or without the slash).
      source += index === 0 ? '(.*)' : '(?:/(.*))?';
      vault += `${sep}(?P<${name}>.*)`;
      openApi.push(`{${name}}`);
      hasGlob = true;
      seenParam = true;
    } else if (segment.startsWith('+')) {
      const name = segment.slice(1);
      if (!NAME_RE.test(name)) throw new Error(`pattern "${rawPattern}": invalid parameter name "${name}"`);
      paramNames.push(name);
      source += `${sep}(.+)`;
      vault += `${sep}(?P<${name}>.+)`;
      openApi.push(`{${name}}`);
      seenParam = true;
    } else if (segment.startsWith(':')) {
      const name = segment.slice(1);
      if (!NAME_RE.test(name)) throw new Error(`pattern "${rawPattern}": invalid parameter name "${name}"`);
      paramNames.push(name);
      source += `${sep}([^/]+)`;
      vault += `${sep}(?P<${name}>[^/]+)`;
      openApi.push(`{${name}}`);
      seenParam = true;
    } else {
      if (segment === '') throw new Error(`pattern "${rawPattern}": empty segment`);
      source += sep + escapeRegex(segment);
      vault += sep + escapeRegex(segment);
      openApi.push(segment);
      if (!seenParam) literal.push(segment);
    }
  });
  if (new Set(paramNames).size !== paramNames.length) throw new Error(`pattern "${rawPattern}": duplicate parameter`);
  // Non-glob patterns tolerate one trailing slash (`sys/policy/` as sent by LIST clients).
  const regex = new RegExp(`^${source}${hasGlob ? '' : '/?'}$`);
  return {
    pattern,
    regex,
    paramNames,
    literalPrefix: literal.join('/'),
    hasGlob,
    openApiPath: '/' + openApi.join('/'),
    vaultRegex: `^${vault}${hasGlob ? '' : '/?'}$`,
  };
}

/** Matches a relative path (no leading slash); undefined when it does not match. */
export function matchPattern(compiled: CompiledPattern, path: string): Record<string, string> | undefined {
  const m = compiled.regex.exec(path);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < compiled.paramNames.length; i++) {
    params[compiled.paramNames[i] as string] = m[i + 1] ?? '';
  }
  return params;
}
