import type { AdapterModule } from '../types.js';
import { bedrockAdapter } from './adapter.js';
import { BEDROCK_PROVIDER } from './provider.js';

/** AWS Bedrock: SigV4 (or a Bedrock API key), Converse for chat, InvokeModel embeddings, Agent Runtime rerank. */
export const bedrock: AdapterModule = { providers: [BEDROCK_PROVIDER], adapter: bedrockAdapter };
