import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Role, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';
import { onTestFinished } from 'vitest';
import { listenOnLoopback } from './loopback-server.js';

/**
 * A real A2A agent on 127.0.0.1, built with the official SDK's server parts: its card at
 * /.well-known/agent-card.json and its JSON-RPC endpoint at /a2a/jsonrpc, speaking A2A 1.0 and
 * (the SDK's compatibility layer) 0.3. It echoes text as an artifact, streaming status and
 * artifact updates; "hold" makes it wait for `release()` after its first event (so a test can
 * see the gateway relay before the stream ends); "long" keeps the task working until cancelled.
 * With a `token`, every request must carry `Authorization: Bearer <token>` (else 401), and every
 * request's headers are recorded so tests can check what the gateway sent.
 */
export interface A2aAgent {
  url: string;
  rpcUrl: string;
  card: AgentCard;
  requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders }>;
  /** Streams whose client (the gateway) went away before they ended. */
  closedEarly: number;
  release(): void;
  close(): Promise<void>;
}

export const AGENT_SKILLS = [
  { id: 'echo', name: 'Echo', description: 'Says back what it was told.', tags: ['text'] },
  { id: 'shout', name: 'Shout', description: 'Says it louder.', tags: ['text'] },
  { id: 'whisper', name: 'Whisper', description: 'Says it quietly.', tags: [] },
];

const textOf = (message: Message) =>
  message.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join(' ');

export async function startA2aAgent(options: { token?: string } = {}): Promise<A2aAgent> {
  let releaseHold: () => void = () => undefined;
  let held = new Promise<void>((resolve) => (releaseHold = resolve));
  const cancelled = new Set<string>();

  const status = (ctx: RequestContext, state: TaskState) =>
    AgentEvent.statusUpdate({
      taskId: ctx.taskId,
      contextId: ctx.contextId,
      status: { state, message: undefined, timestamp: new Date().toISOString() },
      metadata: undefined,
    });

  const executor: AgentExecutor = {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const text = textOf(ctx.userMessage);
      const task: Task = {
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
      if (text === 'hold') await held;
      bus.publish(status(ctx, TaskState.TASK_STATE_WORKING));
      if (text === 'long') {
        while (!cancelled.has(ctx.taskId)) await new Promise((resolve) => setTimeout(resolve, 10));
        bus.publish(status(ctx, TaskState.TASK_STATE_CANCELED));
        bus.finished();
        return;
      }
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          artifact: {
            artifactId: 'answer',
            name: 'echo',
            description: '',
            parts: [
              {
                content: { $case: 'text', value: `echo: ${text}` },
                metadata: undefined,
                filename: '',
                mediaType: 'text/plain',
              },
            ],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED));
      bus.finished();
    },
    async cancelTask(taskId: string) {
      cancelled.add(taskId);
    },
  };

  const card: AgentCard = {
    name: 'Echo agent',
    description: 'Echoes text back, as an A2A task.',
    version: '1.4.0',
    supportedInterfaces: [],
    provider: { organization: 'svcgw tests', url: 'https://example.test' },
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: AGENT_SKILLS.map((skill) => ({
      ...skill,
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    })),
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const requests: A2aAgent['requests'] = [];
  const state = { closedEarly: 0 };
  const app = express();
  app.use((req: any, res: any, next: () => void) => {
    requests.push({ method: req.method, path: req.url, headers: req.headers });
    res.once('close', () => {
      if (!res.writableFinished) state.closedEarly += 1;
    });
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
      res.status(401).json({ error: 'missing or wrong bearer token' });
      return;
    }
    next();
  });
  app.use(
    '/.well-known/agent-card.json',
    agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } }),
  );
  app.use(
    '/a2a/jsonrpc',
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat: { enabled: true },
    }),
  );
  const loop = await listenOnLoopback(createServer(app));
  const rpcUrl = `${loop.url}/a2a/jsonrpc`;
  card.supportedInterfaces.push(
    { url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    { url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
    { url: `${loop.url}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
  );
  onTestFinished(() => loop.close());
  return {
    url: loop.url,
    rpcUrl,
    card,
    requests,
    get closedEarly() {
      return state.closedEarly;
    },
    release() {
      releaseHold();
      held = new Promise<void>((resolve) => (releaseHold = resolve));
    },
    close: () => loop.close(),
  };
}

export { Role };
