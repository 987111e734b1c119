// Topic subscriptions of the event stream (spec "Events": `topic=<Topic>[:<filter_key>]`,
// repeatable, default `*:*`; reference §6 and nomad/stream/subscription.go `filter`).
import { BadRequestError } from '@selfstack/errors';

/**
 * Topics this server emits or may emit. The spec lists `ACLRoles`; the anchor's topic is
 * `ACLRole`: both name the same topic here.
 */
export const EVENT_TOPICS = ['ACLToken', 'ACLPolicy', 'ACLRole', 'Allocation', 'Job', 'Evaluation', 'Deployment', 'Node', 'NodeDrain', 'Service'] as const;
export type EventTopic = (typeof EVENT_TOPICS)[number];

const KNOWN = new Set<string>(EVENT_TOPICS);
const ALIASES: Readonly<Record<string, EventTopic>> = { ACLRoles: 'ACLRole' };

/** Topics whose events belong to a namespace (spec: need `read-job` there). */
export const NAMESPACED_TOPICS: ReadonlySet<string> = new Set(['Allocation', 'Job', 'Evaluation', 'Deployment', 'Service']);
/** Topics only a management token may follow. */
export const MANAGEMENT_TOPICS: ReadonlySet<string> = new Set(['ACLToken', 'ACLPolicy', 'ACLRole']);
/** Topics that need `node:read`. */
export const NODE_TOPICS: ReadonlySet<string> = new Set(['Node', 'NodeDrain']);

/** `'*'` as a key means every key of the topic. */
export type TopicKeys = '*' | ReadonlySet<string>;

export interface TopicSubscription {
  /** Topic (or `*`) -> the keys followed. */
  readonly topics: ReadonlyMap<string, TopicKeys>;
}

const invalidPair = (t: string) => new BadRequestError(`Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: ${t}`);

/**
 * Parses the `topic` parameters. A bare topic is `Topic:*`; no parameter at all is `*:*`.
 * More than one `:` is the anchor's 400. Unlike the anchor, an unknown topic name is a
 * 400 too (the anchor silently streams nothing for a misspelt topic).
 */
export function parseTopics(values: readonly string[]): TopicSubscription {
  const topics = new Map<string, TopicKeys>();
  const add = (topic: string, key: string): void => {
    const current = topics.get(topic);
    if (current === '*') return;
    if (key === '*') {
      topics.set(topic, '*');
      return;
    }
    const keys = new Set(current ?? []);
    keys.add(key);
    topics.set(topic, keys);
  };
  if (values.length === 0) add('*', '*');
  for (const raw of values) {
    const parts = raw.split(':');
    if (parts.length > 2) throw invalidPair(raw);
    const name = parts[0] ?? '';
    const key = parts.length === 2 ? (parts[1] as string) : '*';
    if (name === '' || key === '') throw invalidPair(raw);
    const topic = name === '*' ? '*' : (ALIASES[name] ?? name);
    if (topic !== '*' && !KNOWN.has(topic)) {
      throw new BadRequestError(`Invalid topic query: unknown topic ${JSON.stringify(name)} (known: ${EVENT_TOPICS.join(', ')})`);
    }
    add(topic, key);
  }
  return { topics };
}

/** The topics a subscription names (for the ACL check); `*` when it follows all. */
export function subscribedTopics(sub: TopicSubscription): string[] {
  return [...sub.topics.keys()];
}

interface Matchable {
  topic: string;
  key: string;
  filterKeys: readonly string[] | null;
}

function keysMatch(keys: TopicKeys | undefined, event: Matchable): boolean {
  if (keys === undefined) return false;
  if (keys === '*') return true;
  if (keys.has(event.key)) return true;
  if (event.filterKeys) for (const k of event.filterKeys) if (keys.has(k)) return true;
  return false;
}

/**
 * Whether a subscription wants an event: its topic (or `*`) with key `*`, the event's
 * Key, or one of its FilterKeys. A `Node` subscription also receives `NodeDrain` events
 * (the anchor emits drains on the `Node` topic; the spec gives them their own topic).
 * An event matching several entries is delivered once (the anchor appends it twice).
 */
export function topicMatches(sub: TopicSubscription, event: Matchable): boolean {
  const { topics } = sub;
  if (keysMatch(topics.get('*'), event)) return true;
  if (keysMatch(topics.get(event.topic), event)) return true;
  return event.topic === 'NodeDrain' && keysMatch(topics.get('Node'), event);
}
