import { Evaluator } from '@selfstack/bexpr';
import { NOMAD_SCHEMA } from './nomad-schema';

const node = {
  ID: 'n1',
  HTTPAddr: '10.0.0.1:4646',
  Meta: { rack: 'r1' },
  Attributes: { 'os.name': 'ubuntu' },
  Drivers: { docker: { Healthy: true, Attributes: { 'driver.docker.version': '27' } } },
  DrainStrategy: null,
  Events: [{ Message: 'Node registered' }],
};

const run = (expr: string) => Evaluator.create(expr).evaluate(node, NOMAD_SCHEMA);

describe('filters over Nomad objects', () => {
  it('treats the top level as a struct and Meta/Attributes/Drivers as maps', () => {
    expect(() => run('Address == "10.0.0.1"')).toThrow('error finding value in datum: /Address at part 0: couldn\'t find key: struct field with name "Address"');
    expect(run('Meta.zone == "a"')).toBe(false);
    expect(run('Meta.zone != "a"')).toBe(true);
    expect(run('Meta["rack"] == r1')).toBe(true);
    expect(run('Attributes["os.name"] == ubuntu')).toBe(true);
    expect(run('Drivers.docker.Healthy == true')).toBe(true);
    expect(run('"driver.docker.version" in Drivers.docker.Attributes')).toBe(true);
    expect(() => run('Drivers.docker.Nope == 1')).toThrow(/struct field with name "Nope"/);
    expect(run('DrainStrategy is nil')).toBe(true);
    expect(run('Events.0.Message contains registered')).toBe(true);
  });
});

describe('matches', () => {
  it('uses RE2 semantics: linear time, Go error text', () => {
    const started = Date.now();
    expect(Evaluator.create('Name matches "(a+)+$"').evaluate({ Name: 'a'.repeat(5000) + 'b' }, NOMAD_SCHEMA)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(Evaluator.create('Name matches "(?i)^ALPHA"').evaluate({ Name: 'alpha-1' }, NOMAD_SCHEMA)).toBe(true);
    expect(() => Evaluator.create('Name matches "(foo"').evaluate({ Name: 'x' }, NOMAD_SCHEMA)).toThrow(
      'failed to compile regular expression "(foo": error parsing regexp: missing closing ): `(foo`',
    );
  });
});
