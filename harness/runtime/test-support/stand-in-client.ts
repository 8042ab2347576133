import net from 'node:net';
import type { NodeEndpoint } from '../runtime.js';

/**
 * Sends one request line to a stand-in node's client port (stand-in-node.mjs) and returns its
 * answer line, or undefined when no answer came within `timeoutMs` (connection refused, timed
 * out, or a frozen process). Test support only.
 */
export function standInRequest(ep: NodeEndpoint, line: string, timeoutMs = 1_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = net.connect({ host: ep.host, port: ep.port });
    let got = '';
    const done = (v: string | undefined): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    s.on('connect', () => s.write(`${line}\n`));
    s.on('data', (d) => {
      got += String(d);
      const nl = got.indexOf('\n');
      if (nl >= 0) done(got.slice(0, nl));
    });
    s.on('error', () => done(undefined));
  });
}
