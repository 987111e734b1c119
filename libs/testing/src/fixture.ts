// The fixture-builder pattern for service tests: defaults in one place, each test states
// only what it cares about. A counter keeps generated unique values (names, ids) distinct
// within a test file.

export type Overrides<T> = { [K in keyof T]?: T[K] };

/**
 * Returns a builder: `build(overrides)` merges overrides (shallowly) over fresh defaults.
 * `defaults` receives a sequence number, so unique fields can use it:
 *   const buildJob = buildFixture((n) => ({ id: `job-${n}`, priority: 50 }));
 *   buildJob({ priority: 90 }) // { id: 'job-1', priority: 90 }
 */
export function buildFixture<T extends object>(defaults: (sequence: number) => T): (overrides?: Overrides<T>) => T {
  let sequence = 0;
  return (overrides = {}) => {
    sequence += 1;
    const base = defaults(sequence);
    const result = { ...base };
    for (const key of Object.keys(overrides) as (keyof T)[]) {
      // An explicit `undefined` override is kept: it is how a test asks for "absent".
      result[key] = overrides[key] as T[keyof T];
    }
    return result;
  };
}
