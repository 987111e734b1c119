import { ApiError, apiErrorMessage, describeError } from './api-errors';

describe('apiErrorMessage: each API in its own words', () => {
  it('secrets, registry, controller: the errors list', () => {
    expect(apiErrorMessage('secrets', 400, '{"errors":["check-and-set parameter did not match the current version"]}\n')).toBe(
      'check-and-set parameter did not match the current version',
    );
    expect(apiErrorMessage('registry', 404, '{"errors":["module not found"]}')).toBe('module not found');
    expect(apiErrorMessage('controller', 503, '{"errors":["no worker is connected"]}')).toBe('no worker is connected');
  });
  it("Vault's empty errors list: the warnings, else the status", () => {
    expect(apiErrorMessage('secrets', 404, '{"errors":[]}')).toBe('not found');
    expect(apiErrorMessage('secrets', 403, '{"errors":[]}\n')).toBe('permission denied');
    expect(apiErrorMessage('secrets', 404, '{"errors":[],"warnings":["Invalid path for a versioned K/V secrets engine."]}')).toBe(
      'Invalid path for a versioned K/V secrets engine.',
    );
  });
  it('boxes: errors with success false', () => {
    expect(apiErrorMessage('boxes', 422, '{"errors":["Version has already been taken"],"success":false}')).toBe('Version has already been taken');
  });
  it('scheduler: the plain-text body; an empty body names the status', () => {
    expect(apiErrorMessage('scheduler', 400, 'failed to create result paginator: failed to read filter expression')).toBe(
      'failed to create result paginator: failed to read filter expression',
    );
    expect(apiErrorMessage('scheduler', 404, '')).toBe('not found');
    expect(apiErrorMessage('scheduler', 502, 'scheduler service unavailable (gateway: upstream connection failed)')).toBe(
      'scheduler service unavailable (gateway: upstream connection failed)',
    );
  });
  it('an HTML page (a proxy of someone else) is not shown raw', () => {
    expect(apiErrorMessage('boxes', 502, '<html><body>Bad Gateway</body></html>')).toBe('bad gateway');
    expect(apiErrorMessage('registry', 418, '')).toBe('HTTP 418');
  });
  it('describeError keeps API messages and names network failures', () => {
    expect(describeError(new ApiError('boxes', 401, 'Invalid token'))).toBe('Invalid token');
    expect(describeError(new TypeError('Failed to fetch'))).toBe('network error: Failed to fetch');
  });
});
