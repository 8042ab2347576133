/**
 * The run's own docker network: a bridge created on the first free /24 of the run subnets
 * (docker-subnet.ts), another one tried when a concurrent run took the one picked.
 */
import { networkInterfaces } from 'node:os';
import type { ContainerRuntimeClient } from 'testcontainers';
import { oneLine, type Dockerode } from './docker-container.js';
import { gatewayAddress, pickFreeSubnet, RUN_SUBNET_PREFIX } from './docker-subnet.js';

/**
 * Creates the bridge network `name` (labelled `labels`) on a /24 that no docker network and no
 * host interface uses, its gateway at the subnet's gateway address; up to 8 subnets are tried
 * when the engine reports an overlap. Returns the network's id and its subnet (CIDR).
 * @throws Error (one line) when no /24 is free or the engine refuses the network.
 */
export async function createRunNetwork(engine: Dockerode, client: ContainerRuntimeClient, name: string, labels: Record<string, string>): Promise<{ id: string; subnet: string }> {
  const taken: string[] = [];
  for (const n of await engine.listNetworks()) for (const c of n.IPAM?.Config ?? []) if (c.Subnet) taken.push(c.Subnet);
  for (const addrs of Object.values(networkInterfaces())) for (const a of addrs ?? []) if (a.family === 'IPv4' && a.cidr) taken.push(a.cidr);
  for (let attempt = 0; attempt < 8; attempt++) {
    const subnet = pickFreeSubnet(taken, (process.pid + attempt * 37) % 256);
    if (subnet === undefined) throw new Error(`no free /24 left in ${RUN_SUBNET_PREFIX}.0.0/16 for the run network`);
    try {
      const network = await client.network.create({
        Name: name,
        CheckDuplicate: true,
        Driver: 'bridge',
        IPAM: { Driver: 'default', Config: [{ Subnet: subnet, Gateway: gatewayAddress(subnet) }] },
        Labels: labels,
      });
      return { id: network.id, subnet };
    } catch (e) {
      if (!/overlap/i.test(oneLine(e))) throw new Error(`cannot create network ${name}: ${oneLine(e)}`);
      taken.push(subnet);
    }
  }
  throw new Error(`cannot create network ${name}: every subnet tried overlapped another network`);
}
