import { parseGoBool } from './go-bool';

describe('parseGoBool (strconv.ParseBool)', () => {
  it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('%s is true', (v) => expect(parseGoBool(v)).toBe(true));
  it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('%s is false', (v) => expect(parseGoBool(v)).toBe(false));
  it.each(['', 'yes', 'on', 'tRUE', ' true', 'true ', '2', 'no'])('%j fails', (v) => expect(parseGoBool(v)).toBeUndefined());
});
