import { Injectable, Logger } from '@nestjs/common';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Settings } from '../config/settings';

const PREFIX = 'whsec_';
const FORMAT = 'v1';

/**
 * Webhook secrets at rest: AES-256-GCM with WEBHOOK_SECRET_KEY (base64 of 32 bytes), a random 96-bit
 * nonce per secret, and the tenant and webhook ids as associated data (a ciphertext copied to another row
 * does not decrypt). Stored as `v1:<base64 nonce|tag|ciphertext>`: a database read without the key does
 * not reveal a secret.
 *
 * Without WEBHOOK_SECRET_KEY (refused when NODE_ENV=production, settings.ts) a fixed development key,
 * derived from a public string, is used and a warning says so: secrets stored that way are readable by
 * anyone with the database and this source, as is anything in a development database.
 */
@Injectable()
export class SecretBox {
  private readonly key: Buffer;

  constructor(settings: Settings) {
    if (settings.WEBHOOK_SECRET_KEY) this.key = Buffer.from(settings.WEBHOOK_SECRET_KEY, 'base64');
    else {
      this.key = createHash('sha256').update('inventory-service development webhook secret key').digest();
      new Logger(SecretBox.name).warn('WEBHOOK_SECRET_KEY is not set: webhook secrets are encrypted with the fixed development key (required in production)');
    }
  }

  /** A new secret: `whsec_` + base64 of 32 random bytes. */
  static newSecret(): string {
    return PREFIX + randomBytes(32).toString('base64');
  }

  /** The bytes an HMAC is keyed with: the base64 after `whsec_` (Standard Webhooks). */
  static signingKey(secret: string): Buffer {
    return Buffer.from(secret.slice(PREFIX.length), 'base64');
  }

  seal(secret: string, tenantId: string, webhookId: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(`${tenantId}/${webhookId}`));
    const text = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${FORMAT}:${Buffer.concat([nonce, cipher.getAuthTag(), text]).toString('base64')}`;
  }

  /** The secret; throws when the ciphertext was made with another key or for another row. */
  open(sealed: string, tenantId: string, webhookId: string): string {
    const [format, data] = sealed.split(':');
    if (format !== FORMAT || !data) throw new Error('unknown webhook secret format');
    const raw = Buffer.from(data, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(`${tenantId}/${webhookId}`));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
