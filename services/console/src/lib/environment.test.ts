import { availability, reachFromProbes } from './environment';

describe('which APIs this origin reaches', () => {
  it('through the gateway: all five, the controller under /controller', () => {
    const reach = reachFromProbes({ gateway: { status: 200, text: 'ok\n' } });
    expect(reach).toEqual({ mode: 'gateway' });
    expect(availability(reach, 'boxes')).toEqual({ ok: true, base: '' });
    expect(availability(reach, 'controller')).toEqual({ ok: true, base: '/controller' });
  });
  it('on the secrets port: secrets only, the others say why', () => {
    const reach = reachFromProbes({
      gateway: { status: 404, text: '{"errors":[]}' },
      sealStatus: { status: 200, text: '{"type":"shamir","initialized":true,"sealed":false}' },
      leader: { status: 404, text: '{"errors":[]}' },
    });
    expect(reach).toEqual({ mode: 'single', service: 'secrets' });
    expect(availability(reach, 'secrets')).toEqual({ ok: true, base: '' });
    const boxes = availability(reach, 'boxes');
    expect(boxes.ok).toBe(false);
    expect(!boxes.ok && boxes.reason).toMatch(/served by the secrets service on its own port/);
  });
  it('on the scheduler port: scheduler only (also when ACLs answer 403)', () => {
    expect(reachFromProbes({ gateway: { status: 404, text: '' }, sealStatus: { status: 404, text: '' }, leader: { status: 200, text: '"127.0.0.1:4647"' } })).toEqual({
      mode: 'single',
      service: 'scheduler',
    });
    expect(reachFromProbes({ sealStatus: { status: 404, text: '' }, leader: { status: 403, text: 'Permission denied' } })).toEqual({ mode: 'single', service: 'scheduler' });
  });
  it('nothing recognisable: unknown, every API unavailable', () => {
    const reach = reachFromProbes({});
    expect(reach).toEqual({ mode: 'unknown' });
    expect(availability(reach, 'secrets').ok).toBe(false);
  });
});
