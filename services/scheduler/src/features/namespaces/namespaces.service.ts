// Namespaces CRUD (spec: namespaces segment jobs). Reads list only namespaces the token
// may use; writes need a management token, as in Nomad.
import { BadRequestError, NotFoundError } from '@selfstack/errors';
import type { Acl } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import { asObject, TABLES, type Indexed, type JsonObject, type ReadOptions } from '../../shared/common.types';
import { blockingRead, shareKey, type SchedulerState } from '../../shared/blocking-read';
import type { JobStore } from '../jobs/jobs.store';
import type { Namespace, NamespaceStore } from './namespaces.store';

export interface NamespaceServiceDeps extends SchedulerState {
  namespaceStore: NamespaceStore;
  jobStore: JobStore;
  region: string;
}

const NAME_RE = /^[a-zA-Z0-9-]{1,128}$/;

export function createNamespaceService(deps: NamespaceServiceDeps) {
  const { namespaceStore, state } = deps;
  return {
    async list(prefix: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Namespace[]>> {
      const r = await blockingRead(deps, [TABLES.namespaces], opts, (db) => namespaceStore.list(db, prefix), shareKey('namespaces', prefix));
      return { index: r.index, value: r.value.filter((ns) => acl.allowNamespace(ns.Name)) };
    },

    async get(name: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Namespace>> {
      if (!acl.allowNamespace(name)) throw denied();
      const r = await blockingRead(deps, [TABLES.namespaces], opts, (db) => namespaceStore.get(db, name), shareKey('namespace', name));
      if (!r.value) throw new NotFoundError('namespace not found');
      return { index: r.index, value: r.value };
    },

    async upsert(pathName: string | null, body: JsonObject, acl: Acl): Promise<number> {
      if (!acl.management) throw denied();
      const name = typeof body['Name'] === 'string' && body['Name'] !== '' ? body['Name'] : (pathName ?? '');
      if (pathName !== null && name !== pathName) throw new BadRequestError('Namespace name does not match request path');
      if (!NAME_RE.test(name)) throw new BadRequestError(`invalid name ${JSON.stringify(name)}. Must match regex ${NAME_RE.source}`);
      const description = typeof body['Description'] === 'string' ? body['Description'] : '';
      if (description.length > 256) throw new BadRequestError('description longer than 256');
      const { index } = await state.withWrite([TABLES.namespaces], async ({ tx, index }) => {
        const prev = await namespaceStore.get(tx, name);
        const ns: Namespace = {
          Name: name,
          Description: description,
          Quota: typeof body['Quota'] === 'string' ? body['Quota'] : '',
          Capabilities: body['Capabilities'] ?? null,
          NodePoolConfiguration: body['NodePoolConfiguration'] ?? null,
          Meta: Object.keys(asObject(body['Meta'])).length > 0 ? asObject(body['Meta']) : {},
          CreateIndex: prev?.CreateIndex ?? index,
          ModifyIndex: index,
        };
        await namespaceStore.put(tx, ns);
      });
      return index;
    },

    async delete(name: string, acl: Acl): Promise<number> {
      if (!acl.management) throw denied();
      if (name === 'default') throw new BadRequestError('default namespace can not be deleted');
      const { index } = await state.withWrite([TABLES.namespaces], async ({ tx }) => {
        if (!(await namespaceStore.get(tx, name))) throw new NotFoundError('namespace not found');
        if ((await deps.jobStore.countInNamespace(tx, name)) > 0) {
          throw new BadRequestError(`namespace ${JSON.stringify(name)} has non-terminal jobs in regions: [${deps.region}]`);
        }
        await namespaceStore.delete(tx, name);
      });
      return index;
    },
  };
}

export type NamespaceService = ReturnType<typeof createNamespaceService>;
