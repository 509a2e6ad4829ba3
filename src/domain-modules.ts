import { Type } from '@nestjs/common';

/** The domain modules mounted under /v1 (one folder each). */
export const DOMAIN_MODULES: Type[] = [];
