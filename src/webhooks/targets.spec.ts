// The module object itself (not an import's frozen namespace), so a spy on its lookup sees targets.ts's calls.
import dns = require('node:dns/promises');
import { checkTarget, isPublicAddress, TargetRefused } from './targets';

describe('webhook targets', () => {
  it('judges IPv4 and IPv6 addresses, whatever form an IPv4 address takes inside IPv6', () => {
    for (const a of ['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '::ffff:93.184.215.14']) expect([a, isPublicAddress(a)]).toEqual([a, true]);
    for (const a of [
      '127.0.0.1', '10.1.2.3', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '::', '::1', '::ffff:10.0.0.1', '::ffff:a00:1', '::ffff:7f00:1',
      // IPv4-compatible (deprecated) and IPv4-translated forms.
      '::10.0.0.1', '::a00:1', '::7f00:1', '::127.0.0.1', '::ffff:0:a00:1', '::ffff:0:127.0.0.1',
      'fe80::1', 'fd00::1', '2001:db8::1', '3fff::1', '64:ff9b::a00:1',
    ])
      expect([a, isPublicAddress(a)]).toEqual([a, false]);
  });

  it('refuses those addresses as URL hosts unless allowed', async () => {
    for (const url of ['http://[::a00:1]/', 'http://[::7f00:1]/', 'http://[::ffff:0:a00:1]/'])
      await expect(checkTarget(url, [])).rejects.toThrow(TargetRefused);
    await expect(checkTarget('http://[::7f00:1]:8080/', ['[::7f00:1]'])).resolves.toMatchObject({ address: '::7f00:1', family: 6 });
  });

  it("resolves a tenant's host names by DNS queries, not the system's thread-pool lookup; only allowed names go that way", async () => {
    const lookup = jest.spyOn(dns, 'lookup');
    try {
      await expect(checkTarget('http://no-such-host.invalid/hook', [])).rejects.toThrow('host no-such-host.invalid does not resolve');
      expect(lookup).not.toHaveBeenCalled();
      await expect(checkTarget('http://no-such-host.invalid/hook', ['no-such-host.invalid'])).rejects.toThrow(TargetRefused);
      expect(lookup).toHaveBeenCalledTimes(1);
    } finally {
      lookup.mockRestore();
    }
  });

  it('takes localhost and the names under it as loopback without asking anyone (RFC 6761)', async () => {
    const lookup = jest.spyOn(dns, 'lookup');
    try {
      for (const url of ['http://localhost:8080/hook', 'http://api.localhost/', 'http://LOCALHOST./'])
        await expect(checkTarget(url, [])).rejects.toThrow(/is or resolves to a non-public address \(127\.0\.0\.1\)/);
      await expect(checkTarget('http://localhost:8080/hook', ['localhost'])).resolves.toMatchObject({ address: '127.0.0.1', family: 4 });
      expect(lookup).not.toHaveBeenCalled();
    } finally {
      lookup.mockRestore();
    }
  });
});
