import { z } from 'zod';

/**
 * Every setting of `svcgw serve`, in one schema. Each key can come from a flag
 * (`--kebab-case`), an environment variable (`SVCGW_UPPER_SNAKE`) or the JSON settings file
 * (`snake_case`), in that order of precedence, over the defaults given here.
 */
export const settingsSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1').describe('Address to listen on.'),
    port: z.coerce.number().int().min(0).max(65535).default(8787).describe('TCP port to listen on (0 picks a free one).'),
    data_dir: z.string().min(1).default('./data').describe('Directory of the SQLite database and generated secrets.'),
    log_level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('Server log level (pino). Logs are JSON, pretty-printed only on a terminal.'),
    max_body_bytes: z.coerce
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(25 * 1024 * 1024)
      .describe('Largest request body accepted; larger bodies get 413.'),
    shutdown_timeout_ms: z.coerce
      .number()
      .int()
      .min(100)
      .default(30_000)
      .describe('How long SIGTERM waits for in-flight requests before closing their connections.'),
    bootstrap_admin_key: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{32,256}$/, 'must be 32 to 256 characters of A-Z a-z 0-9 _ . -')
      .optional()
      .describe('On the first start only: use this value as the owner admin API key instead of a random one.'),
    bootstrap_owner_email: z
      .email()
      .default('owner@svcgw.local')
      .describe('E-mail of the owner user created on the first start.'),
    master_key: z
      .string()
      .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/, 'must be 32 bytes as 64 hex characters or base64')
      .optional()
      .describe('Key that encrypts provider credentials at rest (AES-256-GCM). Without it, one is generated once into <data_dir>/master.key (mode 0600).'),
    key_cache_ttl_ms: z.coerce
      .number()
      .int()
      .min(0)
      .max(3_600_000)
      .default(60_000)
      .describe('How long a verified API key is trusted from memory before it is read again.'),
    upstream_connect_timeout_ms: z.coerce.number().int().min(1).default(10_000).describe('Time-out to connect to a provider; past it the client gets 504.'),
    upstream_headers_timeout_ms: z.coerce
      .number()
      .int()
      .min(1)
      .default(300_000)
      .describe('Time-out for a provider to start answering (response headers); past it the client gets 504.'),
    upstream_body_timeout_ms: z.coerce
      .number()
      .int()
      .min(1)
      .default(300_000)
      .describe('Longest silence allowed between two chunks of a provider response.'),
    log_bodies: z
      .union([z.boolean(), z.enum(['true', 'false', 'ON', 'OFF'])])
      .transform((v) => v === true || v === 'true' || v === 'ON')
      .default(false)
      .describe('Store request and response bodies in request logs (up to log_body_max_bytes each).'),
    log_body_max_bytes: z.coerce.number().int().min(0).max(10 * 1024 * 1024).default(64 * 1024).describe('Cap on each stored body when log_bodies is on.'),
    log_flush_interval_ms: z.coerce.number().int().min(1).max(60_000).default(200).describe('How often batched request logs are written.'),
    pricing_dir: z.string().min(1).optional().describe('Directory of model pricing files (<provider>.json); default: the shipped config/pricing.'),
  })
  .strict();

export type Settings = z.infer<typeof settingsSchema>;
export type SettingName = keyof Settings;

/** The resolved settings plus where the settings file came from; frozen once loaded. */
export type Config = Readonly<Settings & { config_file: string | null }>;

export const envName = (key: string) => `SVCGW_${key.toUpperCase()}`;
export const flagName = (key: string) => `--${key.replaceAll('_', '-')}`;
