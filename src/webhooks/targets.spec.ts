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
});
