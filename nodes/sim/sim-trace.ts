import { Op, type ClientRequest, type ClientResponse } from '../client-protocol.js';
import type { ClusterMsg } from '../cluster-messages.js';
import { KvStatus } from '../kv-status.js';
import { describeEntry } from './sim-world.js';

/** One line of a cluster message for the simulation's trace. */
export function describeMsg(m: ClusterMsg): string {
  switch (m.t) {
    case 'hello':
      return `hello inc=${m.inc} term=${m.term}`;
    case 'hb':
      return `hb term=${m.term} seq=${m.seq}`;
    case 'hb-r':
      return `hb-r term=${m.term} seq=${m.seq}`;
    case 'propose':
    case 'commit':
      return `${m.t} term=${m.term} ${m.entry.pkey} ${describeEntry(m.entry)}`;
    case 'propose-r':
      return `propose-r term=${m.term} ${m.pkey} e${m.epoch} ok=${m.ok}`;
    case 'rep':
      return `rep ${m.pkey} e${m.epoch} tag=${m.tag} ops=${m.ops.map((o) => `${o.rev}:${o.key}`).join(',')}`;
    case 'rep-ack':
      return `rep-ack ${m.pkey} tag=${m.tag} rev=${m.rev}`;
    case 'sync-req':
      return `sync-req ${m.pkey} tag=${m.tag} have=${m.haveTag}@${m.haveRev} recovery=${m.recovery}`;
    case 'sync-resp':
      return `sync-resp ${m.pkey} tag=${m.tag} rev=${m.rev} segs=${m.segs.length} recovery=${m.recovery}`;
    case 'vote-r':
      return `vote-r term=${m.term} granted=${m.granted}`;
    case 'prevote':
    case 'vote':
      return `${m.t} term=${m.term}`;
    case 'prevote-r':
      return `prevote-r term=${m.term} granted=${m.granted}`;
    default:
      return `${m.t} ${JSON.stringify({ ...m, t: undefined })}`;
  }
}

/** One line of a client request for the trace. */
export function describeReq(r: ClientRequest): string {
  switch (r.op) {
    case Op.Put:
      return `put ${r.store}/${r.key}=${r.value.toString()}${r.ifAbsent ? ' ifAbsent' : ''}${r.ifMatchVersion !== undefined ? ` ifMatch=${r.ifMatchVersion}` : ''}`;
    case Op.Delete:
      return `delete ${r.store}/${r.key}`;
    case Op.Get:
      return `get ${r.store}/${r.key}`;
    default:
      return `op${r.op}`;
  }
}

/** One line of a client response for the trace. */
export function describeRes(r: ClientResponse): string {
  const st = KvStatus[r.status];
  if (r.op === Op.Put || r.op === Op.Delete) return `${st}${r.flags ? ' INDETERMINATE' : ''} e${r.info.epoch} v${r.info.version} rev${r.info.revision}`;
  if (r.op === Op.Get) return `get ${st} e${r.epoch} ${r.value ? r.value.toString() : ''}`;
  return st;
}
