import type { AppError } from '../../src/common/errors';

/** The error `run` throws (the test fails when it throws none): for unit specs of rules that throw AppErrors. */
export function failure(run: () => unknown): AppError {
  try {
    run();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected an error');
}
