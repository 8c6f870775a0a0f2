import ssh2 from 'ssh2';
import { describe, expect, it } from 'vitest';
import { newHostKey } from './support/fault-server.js';

const { utils } = ssh2;

describe('fault server host keys', () => {
  it('are always parseable by ssh2, though its raw generator yields an unparseable pair about once in 256', () => {
    let rawFailures = 0;
    for (let i = 0; i < 3000; i++) {
      const raw = utils.generateKeyPairSync('ed25519');
      if (utils.parseKey(raw.private) instanceof Error || utils.parseKey(raw.public) instanceof Error)
        rawFailures++;
    }
    for (let i = 0; i < 1000; i++) {
      const key = newHostKey();
      expect(utils.parseKey(key.private)).not.toBeInstanceOf(Error);
      expect(utils.parseKey(key.public)).not.toBeInstanceOf(Error);
    }
    // 3000 draws at ~1/256 fail ~12 times (none: p ≈ 1e-5); zero means the upstream bug is fixed and newHostKey can go.
    expect(rawFailures).toBeGreaterThan(0);
  });
});
