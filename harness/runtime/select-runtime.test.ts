import { describe, expect, it } from 'vitest';
import type { Runtime } from './runtime.js';
import { selectRuntime, type DockerProbe, type ImageStatus } from './select-runtime.js';

function probe(engine: string | undefined, image: ImageStatus): DockerProbe & { calls: number } {
  const p = {
    calls: 0,
    async engineVersion() {
      p.calls++;
      return engine;
    },
    async imageStatus() {
      p.calls++;
      return image;
    },
  };
  return p;
}

const present: ImageStatus = { state: 'present', image: 'zaris-certify-node:abc' };
const fakeProcess = { kind: 'process' } as unknown as Runtime;

describe('selectRuntime', () => {
  it('auto picks docker when an engine answers and the image is present', async () => {
    const s = await selectRuntime('auto', { probe: probe('20.10.24', present) });
    expect(s.kind).toBe('docker');
    expect(s.reason).toBe('auto: a Docker engine answers (engine 20.10.24, image zaris-certify-node:abc present); nodes run as containers');
    const rt = await s.create();
    expect(rt.kind).toBe('docker');
  });

  it('auto picks docker when the image can be built', async () => {
    const s = await selectRuntime('auto', { probe: probe('24.0.7', { state: 'buildable', image: 'zaris-certify-node:def' }) });
    expect(s.kind).toBe('docker');
    expect(s.reason).toContain('image zaris-certify-node:def to be built');
  });

  it('auto falls back to processes when no engine answers, without asking about the image', async () => {
    const p = probe(undefined, present);
    const s = await selectRuntime('auto', { probe: p, createProcessRuntime: async () => fakeProcess });
    expect(s.kind).toBe('process');
    expect(s.reason).toBe('auto: no Docker engine answers; nodes run as local processes');
    expect(p.calls).toBe(1);
    expect(await s.create()).toBe(fakeProcess);
  });

  it('auto falls back to processes when the image can be neither found nor built', async () => {
    const s = await selectRuntime('auto', { probe: probe('20.10.24', { state: 'unavailable', reason: 'debootstrap is not installed' }) });
    expect(s.kind).toBe('process');
    expect(s.reason).toBe('auto: Docker engine 20.10.24 answers but debootstrap is not installed; nodes run as local processes');
  });

  it('process is taken as asked, without probing docker', async () => {
    const p = probe('20.10.24', present);
    const s = await selectRuntime('process', { probe: p });
    expect(s.kind).toBe('process');
    expect(s.reason).toBe('process: as requested; nodes run as local processes');
    expect(p.calls).toBe(0);
  });

  it('docker as asked, or a one-line error when it cannot run', async () => {
    expect((await selectRuntime('docker', { probe: probe('20.10.24', present) })).reason).toMatch(/^docker: as requested \(engine 20\.10\.24/);
    await expect(selectRuntime('docker', { probe: probe(undefined, present) })).rejects.toThrow(/^runtime docker: no Docker engine answers/);
    await expect(selectRuntime('docker', { probe: probe('20.10.24', { state: 'unavailable', reason: 'dist/ is missing' }) })).rejects.toThrow(
      'runtime docker: dist/ is missing',
    );
  });

  it('refuses an unknown choice', async () => {
    await expect(selectRuntime('kubernetes')).rejects.toThrow('unknown runtime "kubernetes": expected auto, process, docker');
  });
});
