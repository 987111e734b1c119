// Host fingerprint (issue 26 item 1): what the anchor's fingerprinters report as node
// attributes and NodeResources: CPU cores and MHz (cpu.numcores, cpu.frequency,
// cpu.totalcompute), memory (memory.totalbytes), disk of the allocation directory
// (unique.storage.*), kernel.name / kernel.version / os.name / os.version, cpu.arch,
// unique.hostname, unique.network.ip-address, and driver.<name> = 1 for every enabled
// driver with its Drivers entry (Detected, Healthy).
import { readFileSync, statfsSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import type { DriverName } from './agent-config';

export const AGENT_VERSION = '2.0.6';

export interface Fingerprint {
  Attributes: Record<string, string>;
  NodeResources: Record<string, unknown>;
  Drivers: Record<string, Record<string, unknown>>;
}

function osRelease(): { id: string; version: string } {
  try {
    const text = readFileSync('/etc/os-release', 'utf8');
    const get = (k: string) => text.split('\n').find((l) => l.startsWith(`${k}=`))?.slice(k.length + 1).replace(/^"|"$/g, '') ?? '';
    return { id: get('ID') || os.platform(), version: get('VERSION_ID') };
  } catch {
    return { id: os.platform(), version: os.release() };
  }
}

function ipAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** Disk of the filesystem holding `dir` (or, before it exists, its nearest existing
 * parent): total and free MB. */
export function diskOf(dir: string): { totalMb: number; freeMb: number } {
  for (let d = dir; ; d = dirname(d)) {
    try {
      const s = statfsSync(d);
      return { totalMb: Math.floor((s.blocks * s.bsize) / 1048576), freeMb: Math.floor((s.bavail * s.bsize) / 1048576) };
    } catch {
      if (dirname(d) === d) return { totalMb: 0, freeMb: 0 };
    }
  }
}

export function fingerprint(opts: { allocDir: string; drivers: readonly DriverName[]; nodeName: string }): Fingerprint {
  const cpus = os.cpus();
  const cores = Math.max(1, cpus.length);
  // Some virtual machines report speed 0; the anchor then falls back to a default of its own.
  const mhz = Math.max(...cpus.map((c) => c.speed), 0) || 1000;
  const memBytes = os.totalmem();
  const disk = diskOf(opts.allocDir);
  const rel = osRelease();
  const now = new Date().toISOString();
  const Attributes: Record<string, string> = {
    'cpu.arch': os.arch(),
    'cpu.numcores': String(cores),
    'cpu.frequency': String(mhz),
    'cpu.totalcompute': String(cores * mhz),
    'cpu.modelname': cpus[0]?.model ?? '',
    'memory.totalbytes': String(memBytes),
    'kernel.name': os.platform(),
    'kernel.version': os.release(),
    'kernel.arch': os.arch(),
    'os.name': rel.id,
    'os.version': rel.version,
    'unique.hostname': os.hostname(),
    'unique.network.ip-address': ipAddress(),
    'unique.storage.volume': opts.allocDir,
    'unique.storage.bytestotal': String(disk.totalMb * 1048576),
    'unique.storage.bytesfree': String(disk.freeMb * 1048576),
    'nomad.version': AGENT_VERSION,
    'nomad.advertise.address': '',
  };
  const Drivers: Fingerprint['Drivers'] = {};
  for (const d of opts.drivers) {
    const attrs: Record<string, string> = { [`driver.${d}`]: '1' };
    if (d === 'raw_exec') attrs['driver.raw_exec.version'] = AGENT_VERSION;
    Attributes[`driver.${d}`] = '1';
    if (d === 'mock_driver') Attributes['driver.mock'] = '1';
    Drivers[d] = { Attributes: attrs, Detected: true, Healthy: true, HealthDescription: 'Healthy', UpdateTime: now };
  }
  if (opts.drivers.includes('mock_driver')) Drivers['mock'] = { ...Drivers['mock_driver'] };
  const memoryMb = Math.floor(memBytes / 1048576);
  const NodeResources = {
    Cpu: { CpuShares: cores * mhz, TotalCpuCores: cores, ReservableCpuCores: Array.from({ length: cores }, (_, i) => i) },
    Memory: { MemoryMB: memoryMb },
    Disk: { DiskMB: disk.freeMb },
    Networks: [],
    NodeNetworks: [],
    Devices: [],
    MinDynamicPort: 20000,
    MaxDynamicPort: 32000,
  };
  return { Attributes, NodeResources, Drivers };
}
