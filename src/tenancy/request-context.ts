import { ClsStore } from 'nestjs-cls';
import type { EntityManager } from 'typeorm';

/** The caller, as established by authentication. */
export interface Principal {
  tenantId: string;
  userId: string;
  permissions: ReadonlySet<string>;
}

/** What one request carries through AsyncLocalStorage (nestjs-cls). */
export interface RequestStore extends ClsStore {
  principal?: Principal;
  /** The manager of the request's single database transaction (unit of work). */
  manager?: EntityManager;
}
