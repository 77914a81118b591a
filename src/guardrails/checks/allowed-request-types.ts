import { z } from 'zod';
import { defineCheck } from '../define-check.js';

/** The reference's request types; svcgw serves a subset, the others are accepted and never seen. */
export const REQUEST_TYPES = [
  'complete',
  'chatComplete',
  'embed',
  'rerank',
  'moderate',
  'proxy',
  'imageGenerate',
  'imageEdit',
  'createSpeech',
  'createTranscription',
  'createTranslation',
  'realtime',
  'uploadFile',
  'listFiles',
  'retrieveFile',
  'deleteFile',
  'retrieveFileContent',
  'createBatch',
  'retrieveBatch',
  'cancelBatch',
  'listBatches',
  'getBatchOutput',
  'listFinetunes',
  'createFinetune',
  'retrieveFinetune',
  'cancelFinetune',
  'createModelResponse',
  'getModelResponse',
  'deleteModelResponse',
  'listResponseInputItems',
  'messages',
  'listModels',
] as const;

const types = z.array(z.enum(REQUEST_TYPES));
const listIn = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * An allowlist and/or a blocklist of endpoint types; the blocklist wins. Without either, the
 * request's metadata `supported_endpoints` / `blocked_endpoints` (comma-separated) are used,
 * as the established gateway does; with neither, everything passes.
 */
export const allowedRequestTypes = defineCheck({
  id: 'default.allowedRequestTypes',
  hooks: ['beforeRequestHook'],
  parameters: z.strictObject({ allowedTypes: types.optional(), blockedTypes: types.optional() }),
  run(context, p) {
    const allowed: string[] = p.allowedTypes ?? listIn(context.metadata.supported_endpoints);
    const blocked: string[] = p.blockedTypes ?? listIn(context.metadata.blocked_endpoints);
    const type = context.endpoint;
    const data = { requestType: type, allowedTypes: allowed, blockedTypes: blocked };
    if (blocked.includes(type)) return { verdict: false, explanation: `Request type "${type}" is blocked.`, data };
    if (allowed.length > 0 && !allowed.includes(type))
      return { verdict: false, explanation: `Request type "${type}" is not in the allowed types.`, data };
    return { verdict: true, explanation: `Request type "${type}" is allowed.`, data };
  },
});
