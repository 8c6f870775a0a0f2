/** A fixed set of transfer connections; each carries one transfer at a time, waiters queue FIFO. */
import { DocexError } from '../core/errors.js';
import type { Connector } from './connector.js';

export class TransferPool {
  private readonly free: Connector[];
  private readonly waiters: Array<{ resolve: (c: Connector) => void; reject: (err: unknown) => void }> = [];
  private closed = false;

  constructor(readonly connectors: readonly Connector[]) {
    this.free = [...connectors];
  }

  acquire(signal?: AbortSignal): Promise<Connector> {
    if (this.closed)
      return Promise.reject(new DocexError('DOCEX_STOPPING', 'the SFTP server connection is closed'));
    const connector = this.free.shift();
    if (connector) return Promise.resolve(connector);
    return new Promise<Connector>((resolve, reject) => {
      const waiter = {
        resolve: (c: Connector) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(c);
        },
        reject,
      };
      const onAbort = () => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(new DocexError('DOCEX_STOPPING', 'transfer aborted while waiting for a connection'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** A free connection if there is one now (to split a big download), without waiting. */
  tryAcquire(): Connector | undefined {
    return this.closed || this.waiters.length > 0 ? undefined : this.free.shift();
  }

  release(connector: Connector): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(connector);
    else this.free.push(connector);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.reject(new DocexError('DOCEX_STOPPING', 'the SFTP server connection is closed'));
    }
    await Promise.all(this.connectors.map((c) => c.close()));
  }
}
