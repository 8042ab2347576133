/**
 * The user's documents (README.md, CHANGELOG.md and docs/**\/*.md) hold to what issue 25 asks of
 * them: no commit hash (history belongs in `git log`), no machine path, no words of the sessions
 * that wrote them; the README stays a front page (at most 260 lines); every relative link
 * resolves to a file of the checkout; every `make <target>` the README names exists in the
 * Makefile, so each command it shows can run as written.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The most lines README.md may have (the issue says about 250). */
const README_MAX_LINES = 260;

/** Checkout-relative paths of the documents checked: README.md, CHANGELOG.md, docs/**\/*.md. */
function documents(): string[] {
  const out = ['README.md'];
  if (existsSync(path.join(root, 'CHANGELOG.md'))) out.push('CHANGELOG.md');
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(r);
      else if (e.name.endsWith('.md')) out.push(r);
    }
  };
  if (existsSync(path.join(root, 'docs'))) walk('docs');
  return out.sort();
}

const read = (rel: string): string => readFileSync(path.join(root, rel), 'utf8');

/** Each line of `text` matching `re`, as "file:line: text". */
function hits(rel: string, text: string, re: RegExp): string[] {
  return text.split('\n').flatMap((line, i) => (re.test(line) ? [`${rel}:${i + 1}: ${line.trim()}`] : []));
}

/** What may not appear in a document, each with why. */
const FORBIDDEN: ReadonlyArray<{ what: string; re: RegExp }> = [
  { what: 'commit hash (nor any run of 7-40 hex digits: word the figure otherwise)', re: /\b[0-9a-f]{7,40}\b/ },
  { what: 'machine path', re: /\/work\// },
  { what: 'branch or session word', re: /insync|helper/i },
];

/** Relative link targets of a Markdown text: `[text](target)` and `<img src="target">`, anchors and URLs left out. */
export function relativeLinks(text: string): string[] {
  const out: string[] = [];
  const body = text.replace(/```[\s\S]*?```/g, '');
  for (const m of body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push(m[1]);
  for (const m of body.matchAll(/<img[^>]*\ssrc="([^"]+)"/g)) out.push(m[1]);
  return out.map((t) => t.split('#')[0]).filter((t) => t !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** The code of a Markdown text: its fenced blocks and its inline code spans (where commands are written). */
export function codeOf(text: string): string[] {
  const fenced = [...text.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]);
  const inline = [...text.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  return [...fenced, ...inline];
}

/** The targets a Makefile declares (`name:` at the start of a line, `.PHONY` names too). */
function makeTargets(makefile: string): Set<string> {
  const out = new Set<string>();
  for (const m of makefile.matchAll(/^([A-Za-z0-9_.-]+)\s*:(?!=)/gm)) out.add(m[1]);
  for (const m of makefile.matchAll(/^\.PHONY:(.*)$/gm)) for (const n of m[1].trim().split(/\s+/)) out.add(n);
  return out;
}

describe('the user documents', () => {
  const docs = documents();

  it('include the README and the docs/ pages', () => {
    expect(docs).toContain('README.md');
    expect(docs.filter((d) => d.startsWith('docs/')).length).toBeGreaterThan(0);
  });

  for (const { what, re } of FORBIDDEN) {
    it(`contain no ${what}`, () => {
      expect(docs.flatMap((d) => hits(d, read(d), re))).toEqual([]);
    });
  }

  it(`README.md has at most ${README_MAX_LINES} lines`, () => {
    const lines = read('README.md').split('\n').length - (read('README.md').endsWith('\n') ? 1 : 0);
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('link only to files that exist', () => {
    const broken = docs.flatMap((d) =>
      relativeLinks(read(d))
        .filter((t) => !existsSync(path.resolve(root, path.dirname(d), decodeURIComponent(t))))
        .map((t) => `${d}: ${t}`),
    );
    expect(broken).toEqual([]);
  });

  it('name only make targets the Makefile has (README.md)', () => {
    const targets = makeTargets(read('Makefile'));
    const named = codeOf(read('README.md')).flatMap((c) => [...c.matchAll(/(?:^|[\s;&|(])make ([a-z][a-z0-9-]*)\b/g)].map((m) => m[1]));
    expect(named.length).toBeGreaterThan(0);
    expect([...new Set(named.filter((n) => !targets.has(n)))]).toEqual([]);
  });
});

describe('codeOf', () => {
  it('takes fenced blocks and inline spans, not prose', () => {
    expect(codeOf('GNU make turns it\n```sh\nmake test\n```\nthen `make certify X=1`')).toEqual(['make test\n', 'make certify X=1']);
  });
});

describe('relativeLinks', () => {
  it('finds Markdown links and images, not URLs, anchors or code blocks', () => {
    const text = '[a](docs/x.md) [b](https://e.org) [c](#top) ![d](docs/images/y.png "t") [e](z.md#part)\n```\n[f](nope.md)\n```\n<img src="i.png">';
    expect(relativeLinks(text)).toEqual(['docs/x.md', 'docs/images/y.png', 'z.md', 'i.png']);
  });
});
