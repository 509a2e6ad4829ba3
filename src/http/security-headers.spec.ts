import { securityHeaders } from './security-headers';

describe('securityHeaders (helmet, computed once)', () => {
  it("is what helmet's middleware sets for the options: the service's configuration", () => {
    const headers = securityHeaders({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false });
    expect(headers).toMatchObject({
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'SAMEORIGIN',
      'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Opener-Policy': 'same-origin',
    });
    expect(Object.keys(headers)).not.toEqual(expect.arrayContaining(['Content-Security-Policy']));
    expect(Object.keys(headers)).not.toEqual(expect.arrayContaining(['Cross-Origin-Embedder-Policy']));
    expect(Object.isFrozen(headers)).toBe(true);
  });

  it('follows the options (helmet decides, not a copied list)', () => {
    const headers = securityHeaders({ frameguard: { action: 'deny' }, crossOriginEmbedderPolicy: true });
    expect(headers['X-Frame-Options']).toBe('DENY');
    expect(headers['Cross-Origin-Embedder-Policy']).toBe('require-corp');
    expect(headers['Content-Security-Policy']).toMatch(/default-src 'self'/);
  });
});
