import { createPublicKey, KeyObject } from 'node:crypto';

/** The fewest seconds between two JWKS fetches, however many unknown `kid`s arrive (CONTRACT §3). */
export const MIN_REFRESH_MS = 10_000;
/** Known keys are fetched again after this long, on the next token that needs one. */
export const MAX_AGE_MS = 10 * 60_000;

/**
 * The IdP's signing keys as parsed `KeyObject`s by `kid`: no key is parsed per request. A token naming a
 * `kid` not in the cache triggers one JWKS fetch, shared by every request waiting for it and never more
 * often than every MIN_REFRESH_MS — so a key the IdP newly publishes is accepted within seconds, and a
 * flood of junk `kid`s can neither flood the IdP nor lock valid keys out.
 */
export class SigningKeys {
  private keys = new Map<string, KeyObject>();
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private inFlight?: Promise<void>;

  constructor(
    /** A jwks-rsa JwksClient (without its own cache or rate limit), or anything that lists the keys the same way. */
    private readonly client: { getSigningKeys(): Promise<Array<{ kid: string; getPublicKey(): string }>> },
    private readonly now: () => number = Date.now,
  ) {}

  /** The key for `kid` (undefined when the IdP does not publish it). Throws when the JWKS cannot be fetched. */
  async get(kid: string | undefined): Promise<KeyObject | undefined> {
    const stale = this.now() - this.fetchedAt > MAX_AGE_MS;
    const known = kid === undefined ? this.only() : this.keys.get(kid);
    if (known && !stale) return known;
    if (stale || this.now() - this.fetchedAt >= MIN_REFRESH_MS) {
      try {
        await this.refresh();
      } catch (err) {
        // The IdP is unreachable: keys already known keep working until it answers again.
        if (known) return known;
        throw err;
      }
    }
    return kid === undefined ? this.only() : this.keys.get(kid);
  }

  /** A token without `kid` is accepted only while the IdP publishes exactly one key. */
  private only(): KeyObject | undefined {
    return this.keys.size === 1 ? [...this.keys.values()][0] : undefined;
  }

  private refresh(): Promise<void> {
    this.inFlight ??= (async () => {
      try {
        const fetched = await this.client.getSigningKeys();
        this.keys = new Map(fetched.map((k) => [k.kid, createPublicKey(k.getPublicKey())]));
      } finally {
        // A failed fetch also counts: the IdP is not asked again before MIN_REFRESH_MS.
        this.fetchedAt = this.now();
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }
}
