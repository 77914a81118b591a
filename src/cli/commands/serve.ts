import { Command, Option } from 'commander';
import { FatalError } from '../fatal-error.js';
import { addSettingsFlags, configFromFlags } from './settings-flags.js';
import { printBootstrapBanner } from './init.js';

export function serveCommand(): Command {
  return addSettingsFlags(new Command('serve'))
    .description('start the gateway and the administration API on one port')
    .addHelpText(
      'after',
      '\nExamples:\n  svcgw serve\n  svcgw serve --port 9000 --data-dir /var/lib/svcgw\n  SVCGW_CONFIG=config/svcgw.json svcgw serve\n  OPENAI_API_KEY=sk-… svcgw serve --apply svcgw.yaml\n  svcgw serve --deployment eu-production',
    )
    .option(
      '--deployment <slug>',
      "join this deployment (SVCGW_DEPLOYMENT): register, heartbeat, and apply its config, limits and allowed workspaces to this instance's traffic; an unknown slug stops the start (exit 2), too old a version is refused (exit 1)",
    )
    .addOption(
      new Option(
        '--apply <file>',
        'once started, make the server match this apply file (the format of svcgw apply; ${VAR} takes an environment variable), as the owner; on every start, so a restart with the same file changes nothing. A file that is invalid or refused stops the start (exit 2 or 1)',
      ).env('SVCGW_APPLY'),
    )
    .action(async (flags: Record<string, unknown>) => {
      const config = await configFromFlags(flags);
      const applyPath = typeof flags.apply === 'string' ? flags.apply : undefined;
      // Read and checked before anything starts: a broken file stops the start at once (exit 2).
      const startupFile = applyPath ? (await import('../apply/load.js')).readApplyFile(applyPath) : undefined;
      // Before the server's modules load: loading them is what first grows the young generation.
      (await import('../../server/young-generation.js')).capYoungGeneration();
      // Loaded here, so that the admin commands start without the server's modules.
      const [
        { startServer },
        { StorageRefusedError },
        { DeploymentRefusedError },
        { limitHeapGrowth },
        { startIdleCollector },
      ] = await Promise.all([
        import('../../server/start-server.js'),
        import('../../storage/database.js'),
        import('../../deployments/registration.js'),
        import('../../server/heap-growth.js'),
        import('../../server/idle-collector.js'),
      ]);
      // A long-running server: memory that returns to near the live heap after load (issue #19).
      limitHeapGrowth();
      // A schema newer than this version, a deployment refusal: a message for the operator, not a stack trace.
      const server = await startServer({ config }).catch((error: unknown) => {
        if (error instanceof StorageRefusedError) throw new FatalError(error.message, 1);
        if (error instanceof DeploymentRefusedError) throw new FatalError(error.message, error.exitCode);
        throw error;
      });
      // The key is for the person starting the server, never for the log stream: on a terminal it
      // is shown there; when stdout is piped (JSON lines to a collector), it goes to stderr.
      const terminal = process.stdout.isTTY ? process.stdout : process.stderr;
      if (server.bootstrap.created)
        printBootstrapBanner(server.bootstrap.adminApiKey, server.bootstrap.keyFromSettings, terminal);

      // Lines are written asynchronously (a worker thread when pretty): exit once they are out.
      const exitAfterFlush = (code: number) => {
        const exit = () => process.exit(code);
        setTimeout(exit, 2000).unref();
        server.logger.flush(exit);
      };
      if (applyPath && startupFile) {
        const { applyStartupFile } = await import('../apply/startup.js');
        try {
          const { summary, keys } = await applyStartupFile(server, applyPath, startupFile);
          const changed = summary.create + summary.update > 0;
          server.logger.info(
            { file: applyPath, ...summary },
            changed
              ? `startup file ${applyPath} applied: ${summary.create} created, ${summary.update} updated, ${summary.unchanged} unchanged`
              : `startup file ${applyPath}: no changes, the server already matches it (${summary.unchanged} unchanged)`,
          );
          if (keys.length > 0)
            terminal.write(
              `\nsvcgw: new API keys from ${applyPath} (shown once, store them now):\n\n${keys.map((k) => `    ${k.name}  ${k.key}`).join('\n')}\n\n`,
            );
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          server.logger.error({ file: applyPath }, `startup file ${applyPath} failed; stopping`);
          await server.close().catch(() => undefined);
          await new Promise<void>((resolve) => server.logger.flush(() => resolve()));
          throw new FatalError(`--apply ${applyPath}: ${message}`, error instanceof FatalError ? error.exitCode : 1);
        }
      }

      // Gives back the memory start-up and load left behind once the server goes idle (issue #19).
      const stopIdleCollector = startIdleCollector();
      let stopping = false;
      const stop = (reason: string) => {
        if (stopping) return;
        stopping = true;
        stopIdleCollector();
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
