import { Global, Module } from '@nestjs/common';
import { DocumentNumbers } from './numbering.sql';
import { CatalogRefs } from './references.sql';
import { UomConversion } from './uom-conversion.sql';

/**
 * The document kit every document module uses (inventory, procurement, sales, production): numbering,
 * catalog reference checks, UOM conversion. The pure parts — transition tables and the document store
 * (`document-store.ts`), quantities (`quantity.ts`), tracking rules (`tracking.ts`), request rules
 * (`dto-rules.ts`) — are imported directly.
 */
@Global()
@Module({
  providers: [DocumentNumbers, CatalogRefs, UomConversion],
  exports: [DocumentNumbers, CatalogRefs, UomConversion],
})
export class DocumentsModule {}
