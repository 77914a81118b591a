import { Command, InvalidArgumentError } from 'commander';
import { clientCommand, decimal, defined, enc, examples, integer, jsonValue, run, type Context } from './common.js';

interface FeedbackResponse {
  status: string;
  message: string;
  feedback_ids: string[];
}

function weight(value: string): number {
  const n = decimal(value);
  if (n < 0 || n > 1) throw new InvalidArgumentError('expected a number from 0 to 1.');
  return n;
}

function metadataObject(value: string): Record<string, unknown> {
  const parsed = jsonValue(value);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new InvalidArgumentError('expected a JSON object.');
  return parsed as Record<string, unknown>;
}

/** The values of `valueOption`. */
interface ValueOptions {
  value: number;
  weight?: number;
  metadata?: Record<string, unknown>;
}

const valueOption = (command: Command) =>
  command
    .requiredOption('--value <n>', 'score from -10 (worst) to 10 (best)', integer(-10, 10))
    .option('--weight <w>', 'weight from 0 to 1 (default 1 on create; kept on update)', weight)
    .option('--metadata <json>', 'a JSON object kept with the feedback', metadataObject);

function report(ctx: Context, body: FeedbackResponse, verb: string): void {
  ctx.out.result(body, () => `${verb} feedback ${body.feedback_ids.join(', ')}.`);
}

/** Feedback on traces; the API takes it from workspace keys only (the key's workspace). */
export function feedbackCommand(): Command {
  const group = new Command('feedback').description('feedback on traces (needs a workspace API key): create, update');
  group.addCommand(
    examples(
      valueOption(clientCommand('create', 'give feedback on a trace (the x-service-trace-id of its requests)'))
        .requiredOption('--trace-id <id>', 'the trace the feedback is about')
        .action(
          run(async (ctx: Context<ValueOptions & { traceId: string }>) => {
            const o = ctx.opts;
            report(
              ctx,
              await ctx.client.post<FeedbackResponse>(
                '/v1/feedback',
                defined({ trace_id: o.traceId, value: o.value, weight: o.weight, metadata: o.metadata }),
              ),
              'Created',
            );
          }),
        ),
      [
        'svcgw feedback create --trace-id checkout-42 --value 8',
        'svcgw feedback create --trace-id checkout-42 --value -5 --weight 0.5 --metadata \'{"reviewer":"qa"}\' --json',
      ],
    ),
  );
  group.addCommand(
    examples(
      valueOption(clientCommand('update', 'change feedback given before'))
        .argument('<id>', 'feedback id (from create)')
        .action(
          run(async (ctx: Context<ValueOptions>, id: string) => {
            const o = ctx.opts;
            report(
              ctx,
              await ctx.client.put<FeedbackResponse>(
                `/v1/feedback/${enc(id)}`,
                defined({ value: o.value, weight: o.weight, metadata: o.metadata }),
              ),
              'Updated',
            );
          }),
        ),
      ['svcgw feedback update 0c1d… --value 10'],
    ),
  );
  return group;
}
