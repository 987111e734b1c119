// The kinds of field the scheduler's routes declare. Each one is the value its handlers get
// (the zod schema: what ?help=1 and OpenAPI document) plus how Nomad reads it off the wire
// and how Nomad answers a bad one, through the kit's FieldSpec `decode` and `invalid`
// (reference workload-scheduler-nomad-api.md §0, §1.3). Routes only pick kinds; no route
// parses or words an error itself.
import { z } from 'zod';
import { AppError, BadRequestError, InternalError } from '@selfstack/errors';
import { parseBool } from '@selfstack/http-kit';

/** The first string of a query value (the kit hands query fields their first value). */
function text(raw: unknown): string {
  return typeof raw === 'string' ? raw : String(raw);
}

/** A path parameter: present whenever the pattern matched, never empty. */
export function pathParam(description: string) {
  return { schema: z.string().min(1), in: 'path' as const, description };
}

/** A plain query string, `fallback` when absent. */
export function queryString(description: string, fallback = '') {
  return { schema: z.string(), in: 'query' as const, description, default: fallback };
}

/** A query string whose absence the handler tells apart from `''`. */
export function optionalQueryString(description: string) {
  return { schema: z.string(), in: 'query' as const, description };
}

/**
 * Nomad's `parseBool(req, name)` (command/agent/http.go): absent or empty is the default,
 * otherwise strconv.ParseBool, and a bad value is a plain 500 with the strconv text (not a
 * CodedError, reference §1.3: `Failed to parse value of "purge" (x) as a bool: ...`).
 */
export function goBool(description: string, fallback = false) {
  return {
    schema: z.boolean(),
    in: 'query' as const,
    description,
    default: fallback,
    decode: (raw: unknown) => (raw === '' ? undefined : (parseBool(raw) ?? raw)),
    invalid: (raw: unknown, name: string): AppError => {
      const value = text(raw);
      return new InternalError(
        `Failed to parse value of ${JSON.stringify(name)} (${value}) as a bool: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`,
        { expose: true },
      );
    },
  };
}

/** A query value of Nomad's own rules (reference §0.1), answered with its fixed 400 text. */
function nomadQuery<S extends z.ZodType>(schema: S, description: string, decode: (raw: string) => unknown, message: string) {
  return {
    schema,
    in: 'query' as const,
    description,
    decode: (raw: unknown) => decode(text(raw)),
    invalid: (): AppError => new BadRequestError(message),
  };
}

const UNSIGNED = /^\d+$/;
const SIGNED = /^[+-]?\d+$/;
const INT32_MAX = 2147483647;

/** `index`: an unsigned integer, else `Invalid index`. */
export function indexQuery(description: string) {
  return { ...nomadQuery(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), description, (v) => (UNSIGNED.test(v) ? Number(v) : v), 'Invalid index'), default: 0 };
}

/** `wait`: a Go duration (time.ParseDuration: a number other than 0 needs a unit), else `Invalid wait time`. */
export function waitQuery(description: string, isGoDuration: (v: string) => boolean) {
  return nomadQuery(z.string().refine(isGoDuration), description, (v) => v, 'Invalid wait time');
}

/** `stale`: present and empty or `true` allow stale reads, `false` does not, anything else is a 400. */
export function staleQuery(description: string) {
  return {
    ...nomadQuery(z.boolean(), description, (v) => (v === '' || v === 'true' ? true : v === 'false' ? false : v), 'Expect `true` or `false` for `stale` query string parameter'),
    default: false,
  };
}

/** `per_page`: an int32 page size, never negative, else the 400 Nomad words. */
export function perPageQuery(description: string) {
  return {
    ...nomadQuery(z.number().int().min(0).max(INT32_MAX), description, (v) => (SIGNED.test(v) ? Number(v) : v), 'Expect a number for `per_page` query string parameter'),
    default: 0,
  };
}

/** A presence flag whose every value but the falsy one counts (never an error): `pretty` is
 * true unless `0`, `reverse` only for exactly `true` (reference §0, §0.1). */
export function presenceFlag(description: string, isSet: (value: string) => boolean) {
  return { schema: z.boolean(), in: 'query' as const, description, default: false, decode: (raw: unknown) => isSet(text(raw)) };
}

/** The kind of JSON a value is, as Go's encoding/json names it in UnmarshalTypeError. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

/**
 * A member of a JSON request body as Nomad decodes it (encoding/json into a Go struct):
 * no weak conversions, `null` leaves the member unset, and a value of the wrong kind is
 * a 400 with Go's UnmarshalTypeError text (`json: cannot unmarshal string into Go struct
 * field DeploymentPauseRequest.Pause of type bool`).
 */
export function jsonMember<S extends z.ZodType>(schema: S, goField: string, goType: string, description: string) {
  return {
    schema,
    in: 'body' as const,
    description,
    decode: (raw: unknown) => (raw === null ? undefined : raw),
    invalid: (raw: unknown): AppError => new BadRequestError(`json: cannot unmarshal ${jsonKind(raw)} into Go struct field ${goField} of type ${goType}`),
  };
}

/** A JSON object member of any shape (a Go struct or map the service reads further). */
export const jsonObject = z.record(z.string(), z.unknown());
/** A list of strings ([]string). */
export const stringList = z.array(z.string());
