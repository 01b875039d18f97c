import { accessSync, constants } from 'node:fs';
import { z } from 'zod';

/** An unset variable and an empty one mean the same: not configured. */
const unsetWhenEmpty = (value: unknown) => (value === '' ? undefined : value);

function isReadableFile(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** An optional string; empty counts as unset. */
export const optionalStringVar = () => z.preprocess(unsetWhenEmpty, z.string().optional());

/**
 * An optional path of a file this process must be able to read; checked once, at boot, so a
 * mistyped credentials path fails the rollout instead of the first connection.
 */
export const readableFileVar = () =>
  z.preprocess(unsetWhenEmpty, z.string().refine(isReadableFile, 'must name a readable file').optional());
