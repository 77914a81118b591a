/**
 * The architecture of docs/architecture.md as rules that `npm run lint` checks.
 * Layers, top to bottom; a module may import its own layer's peers and anything below it:
 *   entry      cli/, docs/ (the docs generator)
 *   server     server/ (assembles fastify from the parts below)
 *   planes     gateway/, admin/ (admin may read gateway/config to validate configs; never the reverse)
 *   http       http/ (what routes declare: route config, the typed app)
 *   domain     agents/, auth/, cache/, limits/, pricing/, providers/, notifications/, workers/, bootstrap/, features/, guardrails/, prompts/, deployments/, mcp/, secrets/
 *   telemetry  telemetry/
 *   storage    storage/
 *   leaves     config/, lib/
 */
const LAYERS = [
  ['entry', ['cli', 'docs']],
  ['server', ['server']],
  ['planes', ['gateway', 'admin']],
  ['http', ['http']],
  [
    'domain',
    [
      'agents',
      'auth',
      'cache',
      'limits',
      'pricing',
      'providers',
      'notifications',
      'workers',
      'bootstrap',
      'features',
      'guardrails',
      'prompts',
      'deployments',
      'mcp',
      'secrets',
    ],
  ],
  ['telemetry', ['telemetry']],
  ['storage', ['storage']],
  ['leaves', ['config', 'lib']],
];

const folders = (names) => `^src/(${names.join('|')})/`;

/** For each layer: it must not import any layer above it. */
const layerRules = LAYERS.slice(1).map(([name, members], index) => ({
  name: `layer-${name}`,
  comment: `${members.join(', ')} must not import a layer above it (${LAYERS.slice(0, index + 1)
    .map(([above]) => above)
    .join(', ')})`,
  severity: 'error',
  from: { path: folders(members) },
  to: { path: folders(LAYERS.slice(0, index + 1).flatMap(([, above]) => above)) },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'gateway-not-admin',
      comment: 'the data plane does not depend on the control plane',
      severity: 'error',
      from: { path: '^src/gateway/' },
      to: { path: '^src/admin/' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles: shared types live in a module both sides import',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'fastify-only-at-the-edge',
      comment: 'only server/, http/, gateway/routes.ts and the routes files of admin/ touch fastify',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: ['^src/server/', '^src/http/', '^src/gateway/routes\\.ts$', '^src/admin/.+/[a-z-]*routes?\\.ts$'],
      },
      to: { path: 'node_modules/(fastify|fastify-type-provider-zod|@fastify/[^/]+)/' },
    },
    {
      name: 'cli-libraries-only-in-cli',
      comment: 'only cli/ uses commander, ink and react',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: 'node_modules/(commander|ink|react)/' },
    },
    {
      name: 'src-not-tests',
      comment: 'production code never imports tests or scripts',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.d.ts'],
    },
    exclude: { path: '^dist/' },
  },
};
