// What a task group asks for and what a node offers (the anchor's AllocatedResources,
// NodeResources minus ReservedResources).
import { asObject, type JsonObject } from '../../shared/common.types';
import type { Node } from '../../features/nodes/nodes.types';
import type { Resources } from '../engine.types';

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function tasksOf(tg: JsonObject): JsonObject[] {
  return Array.isArray(tg['Tasks']) ? (tg['Tasks'] as unknown[]).map(asObject) : [];
}

/** The task group's ask: tasks' CPU and memory summed, the group's ephemeral disk. */
export function taskGroupAsk(tg: JsonObject): Resources {
  let cpu = 0;
  let memoryMb = 0;
  for (const t of tasksOf(tg)) {
    const r = asObject(t['Resources']);
    cpu += num(r['CPU']);
    memoryMb += num(r['MemoryMB']);
  }
  const disk = tg['EphemeralDisk'] === undefined ? 300 : num(asObject(tg['EphemeralDisk'])['SizeMB']);
  return { cpu, memoryMb, diskMb: disk };
}

/** AllocatedResources of an allocation of this task group. */
export function allocatedResources(tg: JsonObject): JsonObject {
  const tasks: JsonObject = {};
  const lifecycles: JsonObject = {};
  for (const t of tasksOf(tg)) {
    const name = String(t['Name'] ?? '');
    const r = asObject(t['Resources']);
    tasks[name] = {
      Cpu: { CpuShares: num(r['CPU']), ReservedCores: null },
      Memory: { MemoryMB: num(r['MemoryMB']), MemoryMaxMB: num(r['MemoryMaxMB']) },
      Networks: r['Networks'] ?? null,
      Devices: null,
    };
    lifecycles[name] = t['Lifecycle'] ?? null;
  }
  const disk = tg['EphemeralDisk'] === undefined ? 300 : num(asObject(tg['EphemeralDisk'])['SizeMB']);
  return { Tasks: tasks, TaskLifecycles: lifecycles, Shared: { DiskMB: disk, Networks: tg['Networks'] ?? null, Ports: null } };
}

/** What the node offers to allocations: NodeResources (or legacy Resources) minus reserved. */
export function nodeCapacity(node: Node): Resources {
  const nr = asObject(node['NodeResources']);
  const rr = asObject(node['ReservedResources']);
  const legacy = asObject(node['Resources']);
  const legacyReserved = asObject(node['Reserved']);
  const hasModern = Object.keys(nr).length > 0;
  const cpu = hasModern ? num(asObject(nr['Cpu'])['CpuShares']) : num(legacy['CPU']);
  const mem = hasModern ? num(asObject(nr['Memory'])['MemoryMB']) : num(legacy['MemoryMB']);
  const disk = hasModern ? num(asObject(nr['Disk'])['DiskMB']) : num(legacy['DiskMB']);
  const rCpu = Object.keys(rr).length > 0 ? num(asObject(rr['Cpu'])['CpuShares']) : num(legacyReserved['CPU']);
  const rMem = Object.keys(rr).length > 0 ? num(asObject(rr['Memory'])['MemoryMB']) : num(legacyReserved['MemoryMB']);
  const rDisk = Object.keys(rr).length > 0 ? num(asObject(rr['Disk'])['DiskMB']) : num(legacyReserved['DiskMB']);
  return { cpu: cpu - rCpu, memoryMb: mem - rMem, diskMb: disk - rDisk };
}

/** AllocsFit: the first exhausted dimension ('cpu', 'memory', 'disk'), or null when it fits. */
export function exhaustedDimension(capacity: Resources, used: Resources, ask: Resources): string | null {
  if (used.cpu + ask.cpu > capacity.cpu) return 'cpu';
  if (used.memoryMb + ask.memoryMb > capacity.memoryMb) return 'memory';
  if (used.diskMb + ask.diskMb > capacity.diskMb) return 'disk';
  return null;
}

/** ScoreFitBinPack normalised to [0, 1]: fuller nodes score higher (BestFit v3). */
export function binPackScore(capacity: Resources, utilised: Resources): number {
  const freeCpu = capacity.cpu > 0 ? 1 - utilised.cpu / capacity.cpu : 0;
  const freeMem = capacity.memoryMb > 0 ? 1 - utilised.memoryMb / capacity.memoryMb : 0;
  const total = 10 ** freeCpu + 10 ** freeMem;
  const score = Math.min(18, Math.max(0, 20 - total));
  return score / 18;
}
