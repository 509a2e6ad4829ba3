/**
 * Tokens already verified, by their exact text, so a client that sends the same bearer token again is
 * not re-verified (RSA signature checks and claim parsing are a tenth of a request's CPU). An entry
 * lives until the token's `exp` or `ttlMs` after it was verified, whichever is first; at most
 * `maxEntries` are kept (the oldest goes first). A key the IdP withdraws therefore stops a token it
 * signed within `ttlMs`.
 */
export class VerifiedTokens<P> {
  private readonly entries = new Map<string, { principal: P; until: number }>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(token: string): P | undefined {
    const hit = this.entries.get(token);
    if (!hit) return undefined;
    if (hit.until > this.now()) return hit.principal;
    this.entries.delete(token);
    return undefined;
  }

  /** Remembers a verified token; `exp` in seconds since the epoch (the JWT claim). */
  set(token: string, principal: P, exp: number): void {
    const until = Math.min(exp * 1000, this.now() + this.ttlMs);
    if (until <= this.now()) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(token, { principal, until });
  }

  get size(): number {
    return this.entries.size;
  }
}
