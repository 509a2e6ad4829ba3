import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work';
import { inManager, insertStatuses, insertTenant, insertUoms, RunStatement, send } from './tenant-provisioner.sql';

/** Seeded for every tenant on its first request (CONTRACT.md §4, §5). */
export const SEED_UOMS: ReadonlyArray<[code: string, name: string, decimals: number]> = [
  ['EA', 'Each', 0],
  ['BOX', 'Box', 0],
  ['KG', 'Kilogram', 3],
  ['G', 'Gram', 2],
  ['L', 'Litre', 3],
  ['ML', 'Millilitre', 0],
  ['M', 'Metre', 3],
  ['CM', 'Centimetre', 1],
];

export const SEED_STATUSES: ReadonlyArray<[code: string, name: string, isAvailable: boolean]> = [
  ['AVAILABLE', 'Available', true],
  ['QUARANTINE', 'Quarantine', false],
  ['DAMAGED', 'Damaged', false],
];

/**
 * Creates a tenant's defaults on its first request. Idempotent and safe under concurrent first
 * requests: the tenant row's insert is the gate (a concurrent insert waits for the first to commit,
 * then finds the row). The in-memory set only saves the round trip once a tenant is known.
 */
@Injectable()
export class TenantProvisioner {
  private readonly known = new Set<string>();

  constructor(private readonly uow: UnitOfWork) {}

  /** Nothing to wait for (undefined) once the tenant is known to this process. */
  ensure(tenantId: string): Promise<void> | undefined {
    if (this.known.has(tenantId)) return undefined;
    return this.uow.run((m) => provisionTenant(inManager(m), tenantId), tenantId).then(() => void this.known.add(tenantId));
  }
}

/**
 * The tenant row, its units of measure and stock statuses, unless the tenant exists: the gate is the
 * tenant row's insert. Also used by `npm run seed` for a tenant that has not made a request yet.
 */
export async function provisionTenant(run: RunStatement, tenantId: string): Promise<void> {
  const created = (await send(run, insertTenant(tenantId))) as unknown[] | { rows: unknown[] };
  if (!(Array.isArray(created) ? created : created.rows).length) return;
  await send(run, insertUoms(tenantId, JSON.stringify(SEED_UOMS.map(([code, name, decimals]) => ({ code, name, decimals })))));
  await send(run, insertStatuses(tenantId, JSON.stringify(SEED_STATUSES.map(([code, name, is_available]) => ({ code, name, is_available })))));
}
