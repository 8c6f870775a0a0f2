import { expect } from 'vitest';
import { ApiError } from '../../../src/api/errors.js';
import { DocexError } from '../../../src/core/errors.js';

/** The DocexError `promise` rejects with; fails the test when it resolves or throws another kind. */
export async function caughtDocex(promise: Promise<unknown>): Promise<DocexError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(DocexError);
    return err as DocexError;
  }
  throw new Error('expected a rejection');
}

/** The DocexError `fn` throws; fails the test when it returns or throws another kind. */
export function thrownDocex(fn: () => unknown): DocexError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DocexError);
    return err as DocexError;
  }
  throw new Error('expected an error');
}

/** The ApiError `promise` rejects with; fails the test when it resolves or throws another kind. */
export async function caught(promise: Promise<unknown>): Promise<ApiError> {
  const err = await caughtDocex(promise);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}
