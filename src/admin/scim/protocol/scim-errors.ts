import { AppError, type ErrorCode } from '../../../lib/errors.js';

/** RFC 7644 §3.12 `scimType` values, which SCIM clients act on. */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/** An AppError that also names its SCIM `scimType`; the SCIM routes answer it in the SCIM error schema. */
export class ScimError extends AppError {
  readonly scimType: ScimType | null;

  constructor(code: ErrorCode, message: string, scimType: ScimType | null = null) {
    super(code, message);
    this.name = 'ScimError';
    this.scimType = scimType;
  }
}

/** A 400 with its scimType: the client's request cannot be applied as written. */
export const scimInvalid = (scimType: ScimType, message: string) => new ScimError('INVALID_REQUEST', message, scimType);

export const scimNotFound = (what: 'User' | 'Group', id: string) =>
  new ScimError('NOT_FOUND', `${what} ${id} not found.`);

export const scimConflict = (message: string) => new ScimError('CONFLICT', message, 'uniqueness');
