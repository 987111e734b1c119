import type { Prisma } from './generated/prisma/client';

/**
 * A value for a Json column, handed to Prisma as is. Prisma's argument serialiser copies
 * plain objects key by key (`out[key] = ...`, recursively): a `__proto__` key is lost (a
 * request's data silently changed, issue 29) and deep values overflow its stack. An object
 * with `toJSON` is taken as it is and encoded once by JSON.stringify, which keeps every own
 * key and does not recurse in JavaScript.
 */
export function jsonValue(value: unknown): Prisma.InputJsonValue {
  return { toJSON: () => value } as unknown as Prisma.InputJsonValue;
}
