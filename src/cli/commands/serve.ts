import { Command } from 'commander';
import { addSettingsFlags, configFromFlags } from './settings-flags.js';
import { printBootstrapBanner } from './init.js';

export function serveCommand(): Command {
  return addSettingsFlags(new Command('serve'))
    .description('start the gateway and the administration API on one port')
    .addHelpText(
      'after',
      '\nExamples:\n  svcgw serve\n  svcgw serve --port 9000 --data-dir /var/lib/svcgw\n  SVCGW_CONFIG=config/svcgw.json svcgw serve',
    )
    .action(async (flags: Record<string, unknown>) => {
      const config = await configFromFlags(flags);
      // Loaded here, so that the admin commands start without the server's modules.
      const { startServer } = await import('../../server/start-server.js');
      const server = await startServer({ config });
      if (server.bootstrap.created)
        printBootstrapBanner(server.bootstrap.adminApiKey, server.bootstrap.keyFromSettings);

      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        server.logger.info({ signal }, 'shutting down: finishing in-flight requests');
        server.close().then(
          () => {
            server.logger.info('stopped');
            server.logger.flush();
            process.exit(0);
          },
          (error: unknown) => {
            server.logger.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
    });
}
