import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** Query strings arrive as text; integers must be whole decimal numbers, nothing else. */
export const toInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
export const toBoolean = ({ value }: { value: unknown }) =>
  value === 'true' ? true : value === 'false' ? false : value;

export const MAX_LIMIT = 500;
export const DEFAULT_LIMIT = 50;

/** `limit` 1..500 (default 50), `offset` >= 0 (default 0), `after` a cursor (src/common/cursor.ts), `q` free text. Extend it for a list's filters. */
export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })
  @IsOptional() @Transform(toInteger) @IsInt() @Min(1) @Max(MAX_LIMIT)
  limit: number = DEFAULT_LIMIT;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional() @Transform(toInteger) @IsInt() @Min(0)
  offset: number = 0;

  @ApiPropertyOptional({ description: "the previous page's `nextCursor`: the rows after it, in the same order, with the same filters (not with offset > 0)", maxLength: 4000 })
  @IsOptional() @IsString() @MaxLength(4000)
  after?: string;

  @ApiPropertyOptional({ description: 'case-insensitive substring search' })
  @IsOptional() @IsString() @MaxLength(200)
  q?: string;
}

export interface Page<T> {
  data: T[];
  count: number;
  limit: number;
  offset: number;
  /** The cursor of the page's last row when more rows follow, else null. */
  nextCursor: string | null;
}

export const page = <T>(data: T[], count: number, query: PageQuery, nextCursor: string | null): Page<T> => ({
  data,
  count,
  limit: query.limit,
  offset: query.offset,
  nextCursor,
});

/** Escapes LIKE wildcards so `q` is a literal substring. */
export const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
