// Go's strconv.ParseBool, the one reading of a boolean the anchors share: Vault's weak
// decoding of `?list=1`, Nomad's `parseBool` flags, go-bexpr's coercion of a filter value,
// Boundary's `?verbose`. Every service reads booleans through this function.

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** strconv.ParseBool: true/false for the forms it accepts, undefined where it fails. */
export function parseGoBool(text: string): boolean | undefined {
  if (TRUE.has(text)) return true;
  if (FALSE.has(text)) return false;
  return undefined;
}
