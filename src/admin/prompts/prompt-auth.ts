import { BOTH_KEY_TYPES } from '../../http/route-config.js';

/** Prompt routes take admin and workspace keys; the scope is `prompts.<verb>`. */
export const promptAuth = (verb: string) => ({ scope: `prompts.${verb}`, keyTypes: BOTH_KEY_TYPES });
