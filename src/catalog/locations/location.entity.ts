import { Column, Entity } from 'typeorm';
import { documentAudit, DocumentAudit, DocumentEntity } from '../../common/entity';

export const LOCATION_TYPES = ['zone', 'aisle', 'rack', 'bin', 'receiving', 'shipping', 'production', 'staging'] as const;
export type LocationType = (typeof LOCATION_TYPES)[number];

/**
 * A node of a facility's location tree. `path` is the codes from the root joined by '/', fixed at
 * insert from the parent's path, which is why code and parent cannot change afterwards.
 */
@Entity('locations')
export class Location extends DocumentEntity {
  @Column('uuid', { name: 'facility_id' })
  facilityId: string;

  @Column('uuid', { name: 'parent_id', nullable: true })
  parentId: string | null;

  @Column('text')
  code: string;

  @Column('text')
  name: string;

  @Column('text')
  type: LocationType;

  @Column('text')
  path: string;

  @Column('boolean', { name: 'is_active' })
  isActive: boolean;
}

export interface LocationNode extends DocumentAudit {
  id: string;
  facilityId: string;
  parentId: string | null;
  code: string;
  name: string;
  type: LocationType;
  path: string;
  isActive: boolean;
  children: LocationNode[];
}

export const locationNode = (l: Location): LocationNode => ({
  id: l.id,
  facilityId: l.facilityId,
  parentId: l.parentId,
  code: l.code,
  name: l.name,
  type: l.type,
  path: l.path,
  isActive: l.isActive,
  ...documentAudit(l),
  children: [],
});

/**
 * Nests locations under their parents, keeping the given order among siblings. A location whose
 * parent is not in the list is a root (so a subtree's top node is its root).
 */
export function buildTree(rows: Location[]): LocationNode[] {
  const nodes = new Map(rows.map((l) => [l.id, locationNode(l)] as const));
  const roots: LocationNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.parentId ? nodes.get(node.parentId) : undefined;
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}
