export { parseGatewayConfig, formatPath, type ConfigIssue, type ParseConfigResult } from './validate.js';
export { CACHE_MODES, MAX_RETRY_ATTEMPTS, MAX_TARGET_DEPTH, STRATEGY_MODES, type ConfigTarget, type GatewayConfig } from './schema.js';
