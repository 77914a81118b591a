import { z } from 'zod';
import { VERSION } from '../lib/version.js';
import { rollupMetadataKeysProblem } from './rollup-metadata-keys.js';

/** `major.minor.patch`, as svcgw versions are numbered. */
const version = z.string().regex(/^\d{1,6}\.\d{1,6}\.\d{1,6}$/, 'must be a version: major.minor.patch, e.g. 1.4.0');
/** The minor release this build belongs to: instances of the same minor line register with each other. */
const minorFloor = VERSION.replace(/^(\d+)\.(\d+)\..*$/, '$1.$2.0');

/** `ON`/`OFF` (the spec's spelling for flags), or true/false. */
const onOff = (fallback: boolean) =>
  z
    .union([z.boolean(), z.enum(['ON', 'OFF', 'on', 'off', 'true', 'false'])])
    .transform((v) => v === true || v === 'ON' || v === 'on' || v === 'true')
    .default(fallback);

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
    sqlite_cache_mb: z.coerce
      .number()
      .int()
      .min(1)
      .max(4096)
      .default(4)
      .describe('Page cache of each SQLite connection, MiB: memory the process keeps for database pages (the OS caches the file as well). See operations.md#memory.'),
    sqlite_checkpoint_worker: onOff(true).describe(
      'WAL checkpoints of the SQLite file on a worker thread, once the server writes much: no pause of every request in flight while a checkpoint waits for the disk, for ~10 MB more memory once it runs. OFF keeps them on the server’s own connection. See operations.md#sqlite-checkpoints.',
    ),
    database_url: z
      .string()
      .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a PostgreSQL URL: postgres://user:password@host:5432/database')
      .optional()
      .describe('PostgreSQL database shared by several instances (postgres://…); without it storage is the SQLite file in data_dir. See scale-out.md.'),
    log_level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('Server log level (pino). Gateway requests are logged at `info` (one access line each).'),
    log_format: z
      .enum(['auto', 'json', 'pretty'])
      .default('auto')
      .describe('Server log format: `auto` pretty-prints on a terminal and writes JSON lines otherwise (piped, systemd, containers).'),
    access_log: onOff(true).describe('One `info` line per gateway request (method, path, status, latency, provider, model, tokens, cost, request id).'),
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
      .describe(
        'Longest silence allowed between two chunks of a provider response, and between two events of a stream (keep-alive comments and pings do not count).',
      ),
    log_bodies: onOff(false).describe('Store request and response bodies in request logs (up to log_body_max_bytes each).'),
    log_body_max_bytes: z.coerce.number().int().min(0).max(10 * 1024 * 1024).default(64 * 1024).describe('Cap on each stored body when log_bodies is on.'),
    log_flush_interval_ms: z.coerce.number().int().min(1).max(60_000).default(200).describe('How often batched request logs are written.'),
    model_configs_pricing_local_path: z.string().min(1).optional().describe('Directory of local model pricing files (<provider>.json), the last pricing source; default: the shipped config/pricing.'),
    model_configs_capabilities_local_path: z.string().min(1).optional().describe('Directory of local model capability files (<provider>.json); default: the shipped config/capabilities.'),
    model_configs_pricing_log_store_path: z.string().min(1).optional().describe('Pricing files kept by the log store (same format), consulted before the local files.'),
    model_configs_capabilities_log_store_path: z.string().min(1).optional().describe('Capability files kept by the log store, consulted before the local files.'),
    model_configs_proxy_fetch_enabled: onOff(false).describe('Fetch pricing from the model-configs proxy service before the log store and local files.'),
    model_configs_proxy_url: z.url().optional().describe('Base URL of the model-configs proxy service ({url}/general/{provider}, {url}/pricing/{provider}).'),
    redis_url: z.url().optional().describe('Redis shared by several instances for rate-limit counters and budget reservations; without it counters live in this process (and its database).'),
    redis_key_prefix: z.string().min(1).max(64).default('svcgw:').describe('Prefix of every Redis key, so that several deployments can share one Redis.'),
    limits_on_store_failure: z
      .enum(['open', 'closed'])
      .default('closed')
      .describe('When the counter store (Redis) is unreachable: `closed` refuses gateway requests (503), `open` lets them through unlimited; logged loudly either way.'),
    default_model_price: z
      .string()
      .regex(/^\d+(\.\d+)?\/\d+(\.\d+)?$/, 'must be "<input>/<output>" in USD per 1,000,000 tokens, e.g. "3/15"')
      .optional()
      .describe('Price ("<input>/<output>" USD per 1,000,000 tokens) that cost budgets charge for models without a price; without it such requests are refused under a cost budget.'),
    guardrails_enabled: onOff(true).describe('Feature flag (GUARDRAILS_ENABLED): guardrails; OFF turns their routes and checks off.'),
    guardrails_allow_private_content_urls: onOff(false).describe('Guardrails inlineImageUrls and validUrls may fetch URLs found in requests and answers that resolve to private, loopback or link-local addresses.'),
    guardrails_allow_private_check_endpoints: onOff(false).describe('Guardrail webhooks, JWKS and detection services may be on private, loopback or link-local addresses.'),
    guardrails_private_hosts: z
      .string()
      .default('')
      .describe('Comma-separated hosts (`name` or `name:port`) every guardrail check may reach although they are private: your own webhook or JWKS service, without opening all private space.'),
    api_access_enabled: onOff(true).describe('Feature flag (API_ACCESS_ENABLED): the administration API for API keys; OFF leaves only the gateway and health.'),
    data_exports_enabled: onOff(true).describe('Feature flag (DATA_EXPORTS_ENABLED): log exports.'),
    usage_limits_enabled: onOff(true).describe('Feature flag (USAGE_LIMITS_ENABLED): usage limits (budgets); OFF turns their routes and checks off.'),
    audit_logs_enabled: onOff(true).describe('Feature flag (AUDIT_LOGS_ENABLED): audit records and their route.'),
    scim_enabled: onOff(true).describe('Feature flag (SCIM_ENABLED): SCIM provisioning (/v1/scim/…); OFF turns its routes off.'),
    scim_membership_user_mode: onOff(false).describe('SCIM_MEMBERSHIP_USER_MODE: group membership is managed through the SCIM Users endpoint (user resources carry `groups`); member operations in a Groups PATCH are skipped. See scim.md.'),
    policy_enabled: onOff(true).describe('Feature flag (POLICY_ENABLED): rate-limits and usage-limits policies; OFF turns their routes and checks off.'),
    log_retention_display: z.coerce.number().int().min(1).max(3650).default(90).describe('LOG_RETENTION_DISPLAY: days of request logs kept and shown.'),
    analytics_rollup_metadata_keys: z
      .string()
      .default('')
      .superRefine((v, ctx) => {
        const problem = rollupMetadataKeysProblem(v);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe('Comma-separated request metadata keys, and combinations of two keys (`env+team`), at most 8 in all, whose values analytics sum in rollups, so that a filter on one of the keys (`metadata={"env":"prod"}`) or on one pair of each key of a combination (`metadata={"env":"prod","team":"a"}`) is answered without reading request logs. Summed from the second full hour after an instance first starts with them; see analytics.md (Metadata rollups).'),
    metrics_retention_display: z.coerce.number().int().min(1).max(3650).default(365).describe('METRICS_RETENTION_DISPLAY: days of analytics aggregates kept.'),
    smtp_host: z.string().min(1).optional().describe('SMTP server for alert e-mails; without it alerts stay in the outbox.'),
    smtp_port: z.coerce.number().int().min(1).max(65535).default(587).describe('SMTP port.'),
    smtp_secure: onOff(false).describe('Use TLS from the start (port 465); otherwise STARTTLS is used when the server offers it.'),
    smtp_user: z.string().min(1).optional().describe('SMTP user name.'),
    smtp_password: z.string().min(1).optional().describe('SMTP password.'),
    smtp_from: z.string().min(3).default('svcgw <svcgw@localhost>').describe('From address of alert e-mails.'),
    cache_purge_interval_ms: z.coerce.number().int().min(1000).default(60_000).describe('How often expired cache entries are purged in the background.'),
    semantic_cache_threshold: z.coerce.number().min(0).max(1).default(0.95).describe('Cosine similarity at or above which a semantic cache entry answers a request.'),
    semantic_cache_embedding_url: z.url().optional().describe('OpenAI-compatible base URL (…/v1) of the embedding model the semantic cache uses; without it semantic caching falls back to exact matches.'),
    semantic_cache_embedding_api_key: z.string().min(1).optional().describe('Bearer key for semantic_cache_embedding_url.'),
    semantic_cache_embedding_model: z.string().min(1).default('text-embedding-3-small').describe('Embedding model for the semantic cache.'),
    metrics_enabled: onOff(true).describe('Serve GET /metrics (Prometheus text format).'),
    metrics_token: z.string().min(16).optional().describe('When set, GET /metrics requires Authorization: Bearer <metrics_token> instead of an API key.'),
    deployment: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be the slug of a deployment (lower-case letters, digits and dashes)')
      .optional()
      .describe('The deployment this instance joins (`svcgw serve --deployment <slug>`): it registers at start, heartbeats, and applies the deployment\'s config, limits and workspace restriction to its traffic. An unknown slug stops the start (exit 2). See deployments.md.'),
    deployment_heartbeat_interval_ms: z.coerce
      .number()
      .int()
      .min(100)
      .max(3_600_000)
      .default(10_000)
      .describe('How often a deployment instance heartbeats; one silent for 3 intervals is shown `gone`.'),
    advertise_url: z.url().optional().describe('The address recorded for this instance in its deployment (how others reach it); default the URL it listens on.'),
    min_gateway_version: version
      .default(minorFloor)
      .describe('The lowest svcgw version that may register in a deployment while this instance runs (the control plane\'s minimum gateway version); default this build\'s major.minor.0. An older instance is refused at start (exit 1) and the refusal is listed with the deployment\'s instances.'),
    deployment_reported_version: version
      .optional()
      .describe('Rehearsal aid: the version this instance reports when it registers in its deployment, instead of its own; nothing else uses it.'),
    secret_cache_ttl_ms: z.coerce
      .number()
      .int()
      .min(1000)
      .max(86_400_000)
      .default(300_000)
      .describe('How long a value read from a secret manager (secret references) is used before it is read again; a provider answering 401 makes it read again sooner.'),
    secret_manager_timeout_ms: z.coerce.number().int().min(100).max(120_000).default(10_000).describe('Time-out of each call to a secret manager (AWS Secrets Manager, Azure Key Vault, HashiCorp Vault) and its sign-in service.'),
    secret_manager_ca_file: z.string().min(1).optional().describe('PEM file of CA certificates trusted, besides the usual ones, for connections to secret managers and their sign-in services (a Vault behind a private CA).'),
    secret_manager_ambient_credentials: onOff(true).describe('Secret references may sign in with the server\'s own identity: AWS serviceRole and assumedRole (the default credential chain), Azure managed and default, Vault kubernetes. OFF allows only credentials stored in the reference.'),
    secret_manager_azure_challenge_verification: onOff(true).describe('Azure Key Vault: check that the sign-in challenge names the vault\'s own domain (the Azure SDK\'s default); turn off only for a vault whose URL is not in the domain it authenticates for.'),
    vault_kubernetes_token_path: z.string().min(1).default('/var/run/secrets/kubernetes.io/serviceaccount/token').describe('The Kubernetes service-account token that secret references with vault_auth_type kubernetes send to Vault.'),
    retention_interval_ms: z.coerce.number().int().min(1000).default(3_600_000).describe('How often request logs past LOG_RETENTION_DISPLAY are purged (in small batches).'),
    public_url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('The address clients and identity providers reach this server at (https://gw.example.com); single sign-on callback URLs are built from it. Without it, from the address of each request.'),
    oidc_custom_scopes: z
      .string()
      .regex(/^[\x21\x23-\x5B\x5D-\x7E, ]*$/, 'must be comma-separated OAuth scopes')
      .default('')
      .describe('OIDC_CUSTOM_SCOPES: comma-separated scopes every OIDC sign-in asks for besides openid, email and profile.'),
    mcp_timeout_ms: z.coerce.number().int().min(1000).max(3_600_000).default(60_000).describe('Time limit of one request to an upstream MCP server (the handshake, a list, a tool call; progress notifications restart it) and of its token request.'),
    mcp_sync_interval_ms: z.coerce.number().int().min(0).default(3_600_000).describe('How often each MCP integration\'s capabilities and metadata are synced from its server (0: only on changes, tests and list-changed notifications). See docs/mcp.md.'),
  })
  .strict();

export type Settings = z.infer<typeof settingsSchema>;
export type SettingName = keyof Settings;

/** The resolved settings plus where the settings file came from; frozen once loaded. */
export type Config = Readonly<Settings & { config_file: string | null }>;

/** Settings the spec names with its own environment variables (no SVCGW_ prefix). */
const SPEC_ENV_NAMES: Readonly<Record<string, string>> = {
  model_configs_pricing_local_path: 'MODEL_CONFIGS_PRICING_LOCAL_PATH',
  model_configs_capabilities_local_path: 'MODEL_CONFIGS_CAPABILITIES_LOCAL_PATH',
  model_configs_pricing_log_store_path: 'MODEL_CONFIGS_PRICING_LOG_STORE_PATH',
  model_configs_capabilities_log_store_path: 'MODEL_CONFIGS_CAPABILITIES_LOG_STORE_PATH',
  model_configs_proxy_fetch_enabled: 'MODEL_CONFIGS_PROXY_FETCH_ENABLED',
  model_configs_proxy_url: 'MODEL_CONFIGS_PROXY_URL',
  guardrails_enabled: 'GUARDRAILS_ENABLED',
  api_access_enabled: 'API_ACCESS_ENABLED',
  data_exports_enabled: 'DATA_EXPORTS_ENABLED',
  usage_limits_enabled: 'USAGE_LIMITS_ENABLED',
  audit_logs_enabled: 'AUDIT_LOGS_ENABLED',
  scim_enabled: 'SCIM_ENABLED',
  scim_membership_user_mode: 'SCIM_MEMBERSHIP_USER_MODE',
  policy_enabled: 'POLICY_ENABLED',
  log_retention_display: 'LOG_RETENTION_DISPLAY',
  metrics_retention_display: 'METRICS_RETENTION_DISPLAY',
  oidc_custom_scopes: 'OIDC_CUSTOM_SCOPES',
};

export const envName = (key: string) => SPEC_ENV_NAMES[key] ?? `SVCGW_${key.toUpperCase()}`;
export const flagName = (key: string) => `--${key.replaceAll('_', '-')}`;
