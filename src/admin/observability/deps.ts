import type { Config } from '../../config/schema.js';
import type { FeatureFlags } from '../../features/flags.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Db } from '../../storage/database.js';
import type { Repositories } from '../../storage/repositories/index.js';
import type { Logger } from '../../telemetry/logger.js';
import type { RequestLogWriter } from '../../telemetry/request-log-writer.js';
import type { LogVisibility } from '../settings/log-visibility.js';
import type { SecuritySettingsService } from '../settings/security-settings.js';

/** What the analytics and observability routes are built from (assembled in build-app). */
export interface ObservabilityDeps {
  config: Config;
  db: Db;
  repos: Repositories;
  clock: Clock;
  logger: Logger;
  features: FeatureFlags;
  /** The batched request-log writer: `flush()` before reading, `onRecord()` to follow new records. */
  requestLogs: RequestLogWriter;
  visibility: LogVisibility;
  settings: SecuritySettingsService;
  /** Derives the key that signs export download links. */
  secretBox: SecretBox;
}
