/**
 * Every built-in check, by id. Adding a check (a vendor's, say) is one file in this folder
 * built with defineCheck, its id in check-ids.ts, and one line here.
 */
import type { BuiltInCheckId } from '../check-ids.js';
import type { CheckDefinition } from '../types.js';
import { addPrefix } from './add-prefix.js';
import { alluppercase } from './all-upper-case.js';
import { allowedRequestTypes } from './allowed-request-types.js';
import { characterCount } from './character-count.js';
import { containsCode } from './contains-code.js';
import { contains } from './contains.js';
import { endsWith } from './ends-with.js';
import { inlineImageUrls } from './inline-image-urls.js';
import { isAllLowerCase } from './is-all-lower-case.js';
import { jsonKeys } from './json-keys.js';
import { jsonSchema } from './json-schema.js';
import { jwt } from './jwt.js';
import { modelWhitelist } from './model-whitelist.js';
import { pii } from './pii.js';
import { regexMatch } from './regex-match.js';
import { requestParamsCheck } from './request-params-check.js';
import { requiredMetadataKeyPairs } from './required-metadata-key-pairs.js';
import { requiredMetadataKeys } from './required-metadata-keys.js';
import { sentenceCount } from './sentence-count.js';
import { thirdPartyDetection } from './third-party-detection.js';
import { validUrls } from './valid-urls.js';
import { webhook } from './webhook.js';
import { wordCount } from './word-count.js';

export const CHECKS: Readonly<Record<BuiltInCheckId, CheckDefinition>> = Object.freeze({
  'default.regexMatch': regexMatch,
  'default.sentenceCount': sentenceCount,
  'default.wordCount': wordCount,
  'default.characterCount': characterCount,
  'default.jsonSchema': jsonSchema,
  'default.jsonKeys': jsonKeys,
  'default.contains': contains,
  'default.validUrls': validUrls,
  'default.containsCode': containsCode,
  'default.endsWith': endsWith,
  'default.isAllLowerCase': isAllLowerCase,
  'default.alluppercase': alluppercase,
  'default.modelWhitelist': modelWhitelist,
  'default.jwt': jwt,
  'default.webhook': webhook,
  'default.requiredMetadataKeys': requiredMetadataKeys,
  'default.requiredMetadataKeyPairs': requiredMetadataKeyPairs,
  'default.allowedRequestTypes': allowedRequestTypes,
  'default.requestParamsCheck': requestParamsCheck,
  'default.inlineImageUrls': inlineImageUrls,
  'default.addPrefix': addPrefix,
  'default.thirdPartyDetection': thirdPartyDetection,
  'default.pii': pii,
});
