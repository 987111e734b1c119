// Go types of Nomad's structs as far as filters can tell them apart (reference §7): the
// top-level object is a struct (a missing field is an error, hashicorp/nomad#19871), the
// fields below are Go maps (a missing key is "not present"), everything else is a struct.
import type { DatumSchema } from '@selfstack/bexpr';

const MAP_FIELDS = new Set([
  'Meta',
  'Attributes',
  'Config',
  'Env',
  'Links',
  'Drivers',
  'Summary',
  'TaskStates',
  'QueuedAllocations',
  'FailedTGAllocs',
  'ClassEligibility',
  'HostVolumes',
  'CSIControllerPlugins',
  'CSINodePlugins',
  'Tasks',
  'TaskGroups',
  'PlanAnnotations',
  'Capabilities',
  'NamespaceRules',
]);

const SLICE_FIELDS = new Set([
  'Datacenters',
  'Constraints',
  'Affinities',
  'Spreads',
  'Networks',
  'NodeNetworks',
  'Events',
  'Services',
  'Volumes',
  'FilterKeys',
  'Policies',
  'Roles',
  'RelatedEvals',
  'PreemptedAllocations',
  'EvalIDs',
  'Groups',
]);

function lastFieldIsMap(path: readonly string[], containerIsStruct: boolean): boolean {
  const last = path[path.length - 1];
  return containerIsStruct && last !== undefined && MAP_FIELDS.has(last);
}

/** Whether the container holding path[-1] is a struct: walk from the root. */
function containerIsStruct(path: readonly string[]): boolean {
  // Root is a struct; after a map field the next level is a map's value (a struct);
  // numeric parts index slices of structs.
  let isStruct = true;
  for (let i = 0; i < path.length - 1; i++) {
    const part = path[i] as string;
    if (/^\d+$/.test(part) && !isStruct) {
      isStruct = true;
      continue;
    }
    const nowMap: boolean = isStruct && MAP_FIELDS.has(part);
    isStruct = !nowMap;
  }
  return isStruct;
}

export const NOMAD_SCHEMA: DatumSchema = {
  isMap(path) {
    if (path.length === 0) return false;
    return lastFieldIsMap(path, containerIsStruct(path));
  },
  nullKind(path) {
    const last = path[path.length - 1];
    if (last === undefined) return 'invalid';
    if (containerIsStruct(path) && MAP_FIELDS.has(last)) return 'map';
    if (containerIsStruct(path) && SLICE_FIELDS.has(last)) return 'slice';
    return 'invalid';
  },
};
