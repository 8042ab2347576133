import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The Debian archive used when the host's apt sources name none (deb.debian.org, HTTP). */
export const DEFAULT_DEBIAN_MIRROR = 'http://deb.debian.org/debian';

/** One `deb` source entry: an archive URI and the suites taken from it. */
export interface AptSource {
  uri: string;
  suites: string[];
}

/**
 * Parses apt source files into their `deb` entries (deb-src, disabled and non-HTTP entries are
 * left out). Reads both formats apt knows: one-line `.list` (`deb [opts] URI SUITE COMP...`)
 * and deb822 `.sources` stanzas (`Types:`, `URIs:`, `Suites:`, `Enabled:`). Never throws:
 * a line it does not understand is skipped.
 */
export function parseAptSources(text: string): AptSource[] {
  const out: AptSource[] = [];
  const lines = text.split(/\r?\n/);
  // one-line format
  for (const raw of lines) {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line);
    if (m && /^https?:\/\//.test(m[1])) out.push({ uri: m[1], suites: [m[2]] });
  }
  // deb822 format: blank-line separated stanzas of "Field: value" with continuation lines
  const stanzas = text.split(/\r?\n\s*\r?\n/);
  for (const stanza of stanzas) {
    const fields = new Map<string, string>();
    let last: string | undefined;
    for (const raw of stanza.split(/\r?\n/)) {
      if (raw.startsWith('#')) continue;
      const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(raw);
      if (m) {
        last = m[1].toLowerCase();
        fields.set(last, m[2].trim());
      } else if (last !== undefined && /^\s+\S/.test(raw)) {
        fields.set(last, `${fields.get(last) ?? ''} ${raw.trim()}`.trim());
      }
    }
    const types = (fields.get('types') ?? '').split(/\s+/);
    if (!types.includes('deb')) continue;
    if (/^(no|false|0)$/i.test(fields.get('enabled') ?? 'yes')) continue;
    const suites = (fields.get('suites') ?? '').split(/\s+/).filter((s) => s.length > 0);
    for (const uri of (fields.get('uris') ?? '').split(/\s+/)) {
      if (/^https?:\/\//.test(uri) && suites.length > 0) out.push({ uri, suites });
    }
  }
  return out;
}

/**
 * The mirror to debootstrap `suite` from, out of parsed sources: the first entry carrying the
 * suite itself, else the first entry that is not a security archive, else
 * {@link DEFAULT_DEBIAN_MIRROR}. Trailing slashes are removed.
 */
export function pickDebianMirror(sources: AptSource[], suite: string): string {
  const chosen =
    sources.find((s) => s.suites.includes(suite)) ?? sources.find((s) => !/security/.test(s.uri) && !s.suites.some((x) => x.includes('security')));
  return (chosen?.uri ?? DEFAULT_DEBIAN_MIRROR).replace(/\/+$/, '');
}

/**
 * The Debian mirror apt uses on this host, for `suite` (reads /etc/apt/sources.list and
 * /etc/apt/sources.list.d/*.list|*.sources; `aptDir` overrides /etc/apt for tests).
 * Falls back to {@link DEFAULT_DEBIAN_MIRROR} when nothing is readable.
 */
export function hostDebianMirror(suite: string, aptDir = '/etc/apt'): string {
  const texts: string[] = [];
  const read = (p: string): void => {
    try {
      texts.push(readFileSync(p, 'utf8'));
    } catch {
      // an unreadable or missing file names no mirror
    }
  };
  read(join(aptDir, 'sources.list'));
  let entries: string[] = [];
  try {
    entries = readdirSync(join(aptDir, 'sources.list.d')).sort();
  } catch {
    entries = [];
  }
  for (const f of entries) if (f.endsWith('.list') || f.endsWith('.sources')) read(join(aptDir, 'sources.list.d', f));
  return pickDebianMirror(texts.flatMap(parseAptSources), suite);
}
