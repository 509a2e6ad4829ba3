import { Injectable } from '@nestjs/common';
import { invalidField } from '../../common/errors';
import { CatalogRefs } from '../../documents/references.sql';
import { UomConversion } from '../../documents/uom-conversion.sql';
import { LedgerService } from '../ledger/ledger.service';
import { PostingLine } from '../ledger/posting';
import { TransactionView } from '../ledger/views';
import { CreateMoveDto } from './dto/move.dto';

/**
 * Moves inside one facility (CONTRACT §9): bin to bin and status to status, as one `move` ledger
 * transaction of −/+ line pairs. The request's own rules (defaults, same facility, a line that changes
 * something, fields named as the request names them) are checked here; stock, lots, serials and
 * invariant 4 are the ledger's, as for every posting: each line takes out only what its source has
 * unallocated when the line applies, in the request's order (Counters.check, under the balances' locks).
 */
@Injectable()
export class MovesService {
  constructor(
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly ledger: LedgerService,
  ) {}

  async move(dto: CreateMoveDto): Promise<TransactionView> {
    // Items (share-locked), locations and statuses in one statement.
    const { items, locations, statuses } = await this.refs.forPosting(
      dto.lines.map((l) => l.itemId),
      dto.lines.flatMap((l) => [l.fromLocationId, l.toLocationId ?? l.fromLocationId]),
    );
    const lines: PostingLine[] = [];
    for (const [i, line] of dto.lines.entries()) {
      const f = `lines[${i}]`;
      // New work: an inactive item, facility or target location is refused (409); the source location
      // only has to exist (an inactive one may be emptied).
      const item = this.refs.stockItem(items, line.itemId, `${f}.itemId`, 'new');
      const from = this.refs.location(locations, line.fromLocationId, `${f}.fromLocationId`, 'committed');
      const to = this.refs.location(locations, line.toLocationId ?? line.fromLocationId, `${f}.toLocationId`, 'new', from.facilityId);
      const fromStatus = this.refs.status(statuses, line.fromStatusId, `${f}.fromStatusId`);
      const toStatus = line.toStatusId ? this.refs.status(statuses, line.toStatusId, `${f}.toStatusId`) : fromStatus;
      if (to.id === from.id && toStatus.id === fromStatus.id)
        throw invalidField(
          `${f}.${line.toStatusId && !line.toLocationId ? 'toStatusId' : 'toLocationId'}`,
          'must change the location or the status: toLocationId (default fromLocationId) or toStatusId (default fromStatusId) must differ',
        );
      const qty = await this.uoms.toBase(item, line.uomId, line.qty, `${f}.qty`);
      const moved = { itemId: item.id, lotNo: line.lotNo, serialNos: line.serialNos, field: f };
      lines.push(
        // Out of the source: finishing what is there (an inactive source location may be emptied).
        { ...moved, locationId: from.id, statusId: fromStatus.id, qty: qty.negated(), use: 'committed' },
        { ...moved, locationId: to.id, statusId: toStatus.id, qty },
      );
    }
    return this.ledger.post({ type: 'move', reason: dto.reason ?? null, sourceType: 'move', startsWork: true, lines });
  }
}
