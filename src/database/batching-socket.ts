import { Socket } from 'node:net';

/**
 * The socket under every pooled database connection: the writes of one tick leave in one system call.
 * node-postgres writes each protocol message on its own (a prepared statement is Bind, Describe,
 * Execute and Sync: four writes), and every write to an uncorked socket is a system call. Corking on
 * the first write of a tick and uncorking on the next tick sends them together.
 */
export class BatchingSocket extends Socket {
  private corked = false;

  override write(...args: unknown[]): boolean {
    if (!this.corked) {
      this.corked = true;
      this.cork();
      process.nextTick(() => {
        this.corked = false;
        this.uncork();
      });
    }
    return (Socket.prototype.write as (...a: unknown[]) => boolean).apply(this, args);
  }
}
