import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DEBIAN_MIRROR, hostDebianMirror, parseAptSources, pickDebianMirror } from './apt-mirror.js';

const DEB822 = `Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
`;

describe('parseAptSources', () => {
  it('reads deb822 stanzas', () => {
    expect(parseAptSources(DEB822)).toEqual([
      { uri: 'http://deb.debian.org/debian', suites: ['bookworm', 'bookworm-updates'] },
      { uri: 'http://deb.debian.org/debian-security', suites: ['bookworm-security'] },
    ]);
  });

  it('reads one-line entries, skipping deb-src, comments, options and non-HTTP archives', () => {
    const text = [
      '# deb http://commented.example/debian bookworm main',
      'deb-src http://src.example/debian bookworm main',
      'deb [arch=amd64 signed-by=/k.gpg] https://mirror.example/debian/ bookworm main contrib',
      'deb cdrom:[Debian]/ bookworm main',
      'deb http://security.debian.org/debian-security bookworm-security main',
    ].join('\n');
    expect(parseAptSources(text)).toEqual([
      { uri: 'https://mirror.example/debian/', suites: ['bookworm'] },
      { uri: 'http://security.debian.org/debian-security', suites: ['bookworm-security'] },
    ]);
  });

  it('skips disabled deb822 stanzas and source-only ones', () => {
    const text = 'Types: deb\nURIs: http://a.example/debian\nSuites: bookworm\nEnabled: no\n\nTypes: deb-src\nURIs: http://b.example/debian\nSuites: bookworm\n';
    expect(parseAptSources(text)).toEqual([]);
  });

  it('never throws and only returns HTTP(S) archives with suites', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        for (const s of parseAptSources(text)) {
          expect(s.uri).toMatch(/^https?:\/\//);
          expect(s.suites.length).toBeGreaterThan(0);
        }
      }),
    );
  });
});

describe('pickDebianMirror', () => {
  it('prefers the entry carrying the suite, then any non-security one, then deb.debian.org', () => {
    const sources = parseAptSources(DEB822);
    expect(pickDebianMirror(sources, 'bookworm')).toBe('http://deb.debian.org/debian');
    expect(pickDebianMirror([{ uri: 'http://security.debian.org/debian-security', suites: ['trixie-security'] }, { uri: 'http://m.example/debian/', suites: ['trixie'] }], 'bookworm')).toBe(
      'http://m.example/debian',
    );
    expect(pickDebianMirror([], 'bookworm')).toBe(DEFAULT_DEBIAN_MIRROR);
  });

  it('reads the host layout of /etc/apt', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zaris-certify-apt-test-'));
    try {
      expect(hostDebianMirror('bookworm', dir)).toBe(DEFAULT_DEBIAN_MIRROR);
      mkdirSync(join(dir, 'sources.list.d'));
      writeFileSync(join(dir, 'sources.list.d', 'debian.sources'), DEB822.replace('http://deb.debian.org/debian\n', 'http://mirror.local/debian\n'));
      expect(hostDebianMirror('bookworm', dir)).toBe('http://mirror.local/debian');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
