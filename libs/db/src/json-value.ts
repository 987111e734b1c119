import type { Prisma } from './generated/prisma/client';

/**
 * A value for a Json column, handed to Prisma as JSON text. Prisma copies plain objects
 * key by key (`out[key] = ...`, recursively) while it serialises and parameterises a
 * query: a `__proto__` key was lost (a request's data silently changed, issue 29) and deep
 * values overflowed its stack. An object with `toJSON` is taken as it is; returning the
 * JSON protocol's tagged form (`{"$type":"Json","value":"<text>"}`) makes the value one
 * opaque scalar, encoded once by JSON.stringify (which keeps every own key and does not
 * recurse in JavaScript) and stored as that text.
 */
export function jsonValue(value: unknown): Prisma.InputJsonValue {
  return { toJSON: () => ({ $type: 'Json', value: JSON.stringify(value) }) } as unknown as Prisma.InputJsonValue;
}
