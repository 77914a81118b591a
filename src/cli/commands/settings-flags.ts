import type { Command } from 'commander';
import type { Config } from '../../config/schema.js';
import { FatalError } from '../fatal-error.js';

/** The settings flags shared by `serve` and `init`. */
export function addSettingsFlags(command: Command): Command {
  return command
    .option('--host <host>', 'address to listen on (SVCGW_HOST; default 127.0.0.1)')
    .option('--port <port>', 'port to listen on, 0 for any (SVCGW_PORT; default 8787)')
    .option('--data-dir <dir>', 'directory of the database (SVCGW_DATA_DIR; default ./data)')
    .option('--config <file>', 'JSON settings file (SVCGW_CONFIG); see config/svcgw.json')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (SVCGW_LOG_LEVEL; default info)');
}

/** Loads the settings module only when a command needs it, so that the admin commands start fast. */
export async function configFromFlags(flags: Record<string, unknown>): Promise<Config> {
  const { ConfigError, loadConfig } = await import('../../config/load-config.js');
  try {
    return loadConfig({
      flags: {
        host: flags.host,
        port: flags.port,
        data_dir: flags.dataDir,
        config: flags.config,
        log_level: flags.logLevel,
        deployment: flags.deployment,
      },
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new FatalError(error.message, 2);
    throw error;
  }
}
