import { BadRequestError } from '@selfstack/errors';
import { parseTopics, subscribedTopics, topicMatches } from './event-topics';

const ev = (topic: string, key: string, filterKeys: string[] | null = null) => ({ topic, key, filterKeys });

describe('event stream topics (spec "Events"; reference §6)', () => {
  it('no topic parameter follows every topic and key', () => {
    const sub = parseTopics([]);
    expect(subscribedTopics(sub)).toEqual(['*']);
    expect(topicMatches(sub, ev('Job', 'web'))).toBe(true);
    expect(topicMatches(sub, ev('Node', 'n1'))).toBe(true);
  });

  it.each([
    ['Job', ev('Job', 'web'), true],
    ['Job:*', ev('Job', 'web'), true],
    ['Job:web', ev('Job', 'web'), true],
    ['Job:api', ev('Job', 'web'), false],
    ['Job', ev('Evaluation', 'e1', ['web', '']), false],
    // A key matches the Key or any FilterKeys entry.
    ['Evaluation:web', ev('Evaluation', 'e1', ['web', '']), true],
    ['Allocation:d1', ev('Allocation', 'a1', ['web', 'd1']), true],
    ['Allocation:d2', ev('Allocation', 'a1', ['web', 'd1']), false],
    ['*:web', ev('Evaluation', 'e1', ['web']), true],
    ['*:web', ev('Job', 'api'), false],
    // Drains have their own topic (spec); a Node subscription still sees them (anchor).
    ['NodeDrain', ev('NodeDrain', 'n1'), true],
    ['Node', ev('NodeDrain', 'n1'), true],
    ['Node:n2', ev('NodeDrain', 'n1'), false],
    ['NodeDrain', ev('Node', 'n1'), false],
    // The spec's `ACLRoles` is the anchor's `ACLRole`.
    ['ACLRoles', ev('ACLRole', 'r1'), true],
  ])('topic=%s', (param, event, expected) => {
    expect(topicMatches(parseTopics([param]), event)).toBe(expected);
  });

  it('merges repeated parameters; a bare topic widens keys given before', () => {
    const sub = parseTopics(['Job:a', 'Job:b', 'Node']);
    expect(topicMatches(sub, ev('Job', 'a'))).toBe(true);
    expect(topicMatches(sub, ev('Job', 'b'))).toBe(true);
    expect(topicMatches(sub, ev('Job', 'c'))).toBe(false);
    expect(topicMatches(sub, ev('Node', 'x'))).toBe(true);
    expect(topicMatches(parseTopics(['Job:a', 'Job']), ev('Job', 'z'))).toBe(true);
    expect(subscribedTopics(sub).sort()).toEqual(['Job', 'Node']);
  });

  it.each([
    ['Job:a:b', 'Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: Job:a:b'],
    [':a', 'Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: :a'],
    ['Job:', 'Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: Job:'],
    ['Jobs', 'Invalid topic query: unknown topic "Jobs" (known: ACLToken, ACLPolicy, ACLRole, Allocation, Job, Evaluation, Deployment, Node, NodeDrain, Service)'],
  ])('rejects %s with a 400', (param, message) => {
    let caught: unknown;
    try {
      parseTopics([param]);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BadRequestError);
    expect((caught as BadRequestError).status).toBe(400);
    expect((caught as Error).message).toBe(message);
  });
});
