// Agent and status endpoints: this process is a single server that is always the leader
// of its region (spec "Consistency": LastContact 0, KnownLeader true).
import type { AnyPathSpec } from '@selfstack/http-kit';
import { READ_QUERY } from '../../http/query';
import { plainReply } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import { denied } from '../acl/acl.service';

export interface AgentInfo {
  name: string;
  region: string;
  datacenter: string;
  /** host:port of the HTTP listener as advertised */
  advertiseAddr: string;
  version: string;
  peerRegions: readonly string[];
  aclEnabled: boolean;
}

export function agentPaths(info: AgentInfo): AnyPathSpec<RequestExtra>[] {
  const [host = '127.0.0.1', port = '4646'] = info.advertiseAddr.split(':');
  const rpc = `${host}:4647`;
  const member = {
    Name: `${info.name}.${info.region}`,
    Addr: host,
    Port: 4648,
    Tags: {
      region: info.region,
      dc: info.datacenter,
      role: 'nomad',
      build: info.version,
      vsn: '1',
      port: '4647',
      bootstrap: '1',
      expect: '1',
      rpc_addr: host,
      id: info.name,
    },
    Status: 'alive',
    ProtocolMin: 1,
    ProtocolMax: 5,
    ProtocolCur: 2,
    DelegateMin: 2,
    DelegateMax: 5,
    DelegateCur: 2,
  };
  return [
    schedulerPath({
      pattern: 'agent/members',
      summary: 'Cluster members (servers)',
      fields: { ...READ_QUERY },
      operations: {
        read(ctx) {
          if (!ctx.extra.identity.acl.allowNodeRead()) throw denied();
          return plainReply({ ServerName: info.name, ServerRegion: info.region, ServerDC: info.datacenter, Members: [member] });
        },
      },
    }),
    schedulerPath({
      pattern: 'agent/self',
      summary: 'This agent: configuration summary, member entry and stats',
      fields: { ...READ_QUERY },
      operations: {
        read(ctx) {
          if (!ctx.extra.identity.acl.allowAgentRead()) throw denied();
          return plainReply({
            config: {
              Region: info.region,
              Datacenter: info.datacenter,
              NodeName: info.name,
              Version: { Version: info.version, VersionPrerelease: '', VersionMetadata: '' },
              Ports: { HTTP: Number(port), RPC: 4647, Serf: 4648 },
              ACL: { Enabled: info.aclEnabled },
              Server: { Enabled: true, BootstrapExpect: 1 },
              Client: { Enabled: false },
            },
            member,
            stats: { nomad: { leader: 'true', server: 'true', known_regions: String(1 + info.peerRegions.length), leader_addr: rpc } },
          });
        },
      },
    }),
    schedulerPath({
      pattern: 'status/leader',
      summary: 'Address of the leader',
      fields: { ...READ_QUERY },
      operations: { read: () => plainReply(rpc) },
    }),
    schedulerPath({
      pattern: 'status/peers',
      summary: 'Raft peers of the region',
      fields: { ...READ_QUERY },
      operations: { read: () => plainReply([rpc]) },
    }),
    schedulerPath({
      pattern: 'regions',
      summary: 'Known regions',
      fields: { ...READ_QUERY },
      operations: { read: () => plainReply([info.region, ...info.peerRegions].sort()) },
    }),
  ];
}
