// A stand-in node process for the target runtime's tests: `node stand-in-peer.mjs HOST PORT`.
// Counts its starts in ./starts-PORT (its working folder is the node's data folder) and answers one
// line per connection:
//   who             -> "<the caller's address as seen here> <starts> <pid>"
//   dial HOST PORT  -> asks HOST:PORT "who" (1 s bound) and answers its reply, "timeout" or "error <code>"
import fs from 'node:fs';
import net from 'node:net';

const [host, port] = process.argv.slice(2);
const file = `starts-${port}`;
const starts = (fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : 0) + 1;
fs.writeFileSync(file, String(starts));

net
  .createServer((s) => {
    let buf = '';
    s.on('error', () => {});
    s.on('data', (d) => {
      buf += d;
      const i = buf.indexOf('\n');
      if (i < 0) return;
      const [cmd, h, p] = buf.slice(0, i).split(' ');
      if (cmd === 'who') s.end(`${s.remoteAddress} ${starts} ${process.pid}\n`);
      else if (cmd === 'dial') {
        const c = net.connect({ host: h, port: Number(p) });
        let out = '';
        const t = setTimeout(() => {
          c.destroy();
          s.end('timeout\n');
        }, 1000);
        c.on('connect', () => c.write('who\n'));
        c.on('data', (x) => (out += x));
        c.on('end', () => {
          clearTimeout(t);
          s.end(out);
        });
        c.on('error', (e) => {
          clearTimeout(t);
          s.end(`error ${e.code}\n`);
        });
      } else s.end('?\n');
    });
  })
  .listen(Number(port), host);
