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
      // The key is for the person starting the server, never for the log stream: on a terminal it
      // is shown there; when stdout is piped (JSON lines to a collector), it goes to stderr.
      if (server.bootstrap.created)
        printBootstrapBanner(
          server.bootstrap.adminApiKey,
          server.bootstrap.keyFromSettings,
          process.stdout.isTTY ? process.stdout : process.stderr,
        );

      // Lines are written asynchronously (a worker thread when pretty): exit once they are out.
      const exitAfterFlush = (code: number) => {
        const exit = () => process.exit(code);
        setTimeout(exit, 2000).unref();
        server.logger.flush(exit);
      };
      let stopping = false;
      const stop = (reason: string) => {
        if (stopping) return;
        stopping = true;
        server.logger.info({ reason }, 'shutting down: finishing in-flight requests');
        server.close().then(
          () => {
            server.logger.info('stopped');
            exitAfterFlush(0);
          },
          (error: unknown) => {
            server.logger.error({ err: error }, 'shutdown failed');
            exitAfterFlush(1);
          },
        );
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
      followNpmLauncher(() => stop('launcher exited'));
    });
}

/**
 * Under npm (`npx svcgw serve`, `npm start`) the process tree is npm → `sh -c svcgw` → this
 * process. A SIGTERM sent to npm is passed to the shell only, which dies and leaves the server
 * holding its port. So when started by npm, follow the launcher: once it has gone (this process
 * is re-parented), stop as on SIGTERM. A server started any other way (systemd, a shell's `&`)
 * is left alone.
 */
function followNpmLauncher(stop: () => void): void {
  if (!process.env.npm_command) return;
  const launcher = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    stop();
  }, 250);
  timer.unref();
}
