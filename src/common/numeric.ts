import { ValueTransformer } from 'typeorm';

/** numeric columns arrive from pg as strings; the API speaks JSON numbers (at most 6 decimals). */
export const numericTransformer: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};
