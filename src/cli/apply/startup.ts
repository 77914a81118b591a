import { createClient } from '../client/http-client.js';
import { FatalError } from '../fatal-error.js';
import { checkPlanOnServer, executePlan, fetchCurrentState, type CreatedKey } from './execute.js';
import { PlanError, planApply, summarise } from './plan.js';
import type { ApplyFile } from './schema.js';

export interface StartupApplyResult {
  summary: ReturnType<typeof summarise>;
  keys: CreatedKey[];
}

/**
 * `svcgw serve --apply`: makes the running server match the file, through its own admin API as
 * the owner (a key held in memory for the length of the apply). The plan is first run as a dry
 * run on the server, so that a file the server would refuse changes nothing; only then is it
 * applied. The same file again changes nothing.
 */
export async function applyStartupFile(
  server: { url: string; holdStartupAdmin(via: string): Promise<{ apiKey: string; release(): void }> },
  path: string,
  file: ApplyFile,
): Promise<StartupApplyResult> {
  const admin = await server.holdStartupAdmin('svcgw serve --apply');
  try {
    const client = createClient({ baseUrl: server.url, apiKey: admin.apiKey });
    let steps;
    try {
      steps = planApply(file, await fetchCurrentState(client, file));
    } catch (error) {
      if (error instanceof PlanError) throw new FatalError(`${path} cannot be applied:\n${error.message}`);
      throw error;
    }
    const summary = summarise(steps);
    const keys: CreatedKey[] = [];
    if (summary.create + summary.update > 0) {
      await checkPlanOnServer(client, steps);
      await executePlan(client, steps, (key) => keys.push(key));
    }
    return { summary, keys };
  } finally {
    admin.release();
  }
}
