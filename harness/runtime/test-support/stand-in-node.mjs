// A stand-in for the store node (dist/nodes/node-main.js) used to test the runtimes' mechanics
// before the store exists: started the same way, `node stand-in-node.mjs --config FILE --id ID`,
// it binds host:clientPort and host:clusterPort of its entry in the cluster config and dials
// peers at their host:clusterPort (from its own address). Node built-ins only, plain JS so it
// runs in the node image as is.
//
// Client port, one text line per request, one line per answer:
//   PING        -> PONG <id> <bootId>            (bootId: random per process start)
//   SET <word>  -> OK                            (kept in memory only)
//   GET         -> VALUE <word> | VALUE -
//   DIAL <peer> -> REACHED <peer> | UNREACHABLE <peer> <reason>   (1.5 s connect bound)
//   TIME        -> TIME <Date.now()> <performance.now()> <real uptime ms>   (clock faults: the
//                  process's wall and monotonic clocks, and /proc/uptime, which no preload fakes)
// Cluster port: says `HELLO <id>` and closes.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import net from 'node:net';

function arg(name) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) {
    process.stderr.write(`stand-in: missing ${name}\n`);
    process.exit(64);
  }
  return process.argv[i + 1];
}

const config = JSON.parse(readFileSync(arg('--config'), 'utf8'));
const id = arg('--id');
const self = config.nodes.find((n) => n.id === id);
if (!self) {
  process.stderr.write(`stand-in: node ${id} is not in the config\n`);
  process.exit(64);
}
const bootId = randomBytes(6).toString('hex');
let value = '-';

function dial(peerId) {
  const peer = config.nodes.find((n) => n.id === peerId);
  if (!peer) return Promise.resolve(`UNREACHABLE ${peerId} unknown-node`);
  return new Promise((resolve) => {
    const s = net.connect({ host: peer.host, port: peer.clusterPort, localAddress: self.host });
    let got = '';
    const done = (answer) => {
      clearTimeout(timer);
      s.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(`UNREACHABLE ${peerId} timeout`), 1500);
    s.on('data', (d) => {
      got += d;
      if (got.includes('\n')) done(got.startsWith(`HELLO ${peerId}`) ? `REACHED ${peerId}` : `UNREACHABLE ${peerId} bad-hello`);
    });
    s.on('error', (e) => done(`UNREACHABLE ${peerId} ${e.code ?? 'error'}`));
  });
}

async function answer(line) {
  const [cmd, a] = line.trim().split(/\s+/);
  if (cmd === 'PING') return `PONG ${id} ${bootId}`;
  if (cmd === 'SET' && a) {
    value = a;
    return 'OK';
  }
  if (cmd === 'GET') return `VALUE ${value}`;
  if (cmd === 'DIAL' && a) return dial(a);
  if (cmd === 'TIME') return `TIME ${Date.now()} ${performance.now().toFixed(1)} ${Math.round(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000)}`;
  return 'ERR unknown request';
}

const client = net.createServer((sock) => {
  let buf = '';
  sock.on('error', () => {});
  sock.on('data', async (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      sock.write(`${await answer(line)}\n`);
    }
  });
});
const cluster = net.createServer((sock) => {
  sock.on('error', () => {});
  sock.end(`HELLO ${id}\n`);
});
cluster.listen(self.clusterPort, self.host, () => {
  client.listen(self.clientPort, self.host, () => {
    process.stdout.write(`stand-in ${id} boot ${bootId} listening on ${self.host}:${self.clientPort} (cluster ${self.clusterPort})\n`);
  });
});
process.on('SIGTERM', () => {
  process.stdout.write(`stand-in ${id} boot ${bootId} got SIGTERM, exiting\n`);
  process.exit(0);
});
