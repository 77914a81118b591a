import { isOrgAdmin, type Principal } from '../../auth/principal.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, invalid, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { IntegrationModelRepository, IntegrationModelRow } from '../../storage/repositories/integration-models.js';
import type { IntegrationRepository, IntegrationRow } from '../../storage/repositories/integrations.js';
import type { IntegrationModelObject, PutModelsBody } from './model-schemas.js';
import { modelSlug } from './model-schemas.js';

/**
 * An integration's model list: which models it (and every provider made from it) allows.
 * Organisation owners and admins manage it, as they manage the integration itself.
 */
export function createIntegrationModelService(deps: {
  integrations: IntegrationRepository;
  models: IntegrationModelRepository;
  clock: Clock;
  onChange: () => void;
}) {
  async function find(principal: Principal, idOrSlug: string, forChange: boolean): Promise<IntegrationRow> {
    if (!isOrgAdmin(principal))
      throw new AppError('ROLE_NOT_ALLOWED', 'Only organisation owners and admins manage integrations.');
    const row = await deps.integrations.findByIdOrSlug(principal.organisationId, idOrSlug);
    if (!row) throw notFound(`Integration ${idOrSlug}`, 'slug');
    if (forChange && row.status !== 'active')
      throw invalid('slug', `Integration ${row.slug} is archived and cannot be changed.`);
    return row;
  }

  return {
    async list(principal: Principal, idOrSlug: string) {
      const row = await find(principal, idOrSlug, false);
      const models = (await deps.models.list(row.id)).map(toModelObject);
      return { total: models.length, allow_all_models: row.allow_all_models === 1, models };
    },

    /** Creates or updates the models given (by slug); models not named stay as they are. */
    async put(principal: Principal, idOrSlug: string, body: PutModelsBody): Promise<IntegrationRow> {
      const row = await find(principal, idOrSlug, true);
      const seen = new Set<string>();
      body.models.forEach((model, i) => {
        if (seen.has(model.slug)) throw invalid(`models[${i}].slug`, `Model ${model.slug} is listed twice.`);
        seen.add(model.slug);
        if (model.is_finetune && !model.base_model_slug)
          throw invalid(`models[${i}].base_model_slug`, 'A fine-tuned model (is_finetune) names its base_model_slug.');
      });
      const stamp = new Date(deps.clock.now()).toISOString();
      const rows: IntegrationModelRow[] = body.models.map((model) => ({
        id: newId(),
        integration_id: row.id,
        slug: model.slug,
        name: model.name ?? null,
        enabled: model.enabled ? 1 : 0,
        is_custom: model.is_custom ? 1 : 0,
        is_finetune: model.is_finetune ? 1 : 0,
        base_model_slug: model.base_model_slug ?? null,
        pricing_config: model.pricing_config ? JSON.stringify(model.pricing_config) : null,
        created_at: stamp,
        last_updated_at: stamp,
      }));
      const allowAll = body.allow_all_models === undefined ? undefined : body.allow_all_models ? 1 : 0;
      await deps.models.upsert(row.id, rows, allowAll, stamp);
      deps.onChange();
      return row;
    },

    /** Removes models from the list; each slug must be listed. */
    async remove(principal: Principal, idOrSlug: string, slugsText: string): Promise<IntegrationRow> {
      const row = await find(principal, idOrSlug, true);
      const slugs = [...new Set(slugsText.split(',').map((slug) => slug.trim()))];
      const malformed = slugs.find((slug) => !modelSlug.safeParse(slug).success);
      if (malformed !== undefined)
        throw invalid(
          'slugs',
          `slugs is a comma-separated list of model slugs; ${JSON.stringify(malformed.slice(0, 64))} is not one.`,
        );
      if (slugs.length > 1000) throw invalid('slugs', 'At most 1000 slugs at once.');
      const listed = new Set((await deps.models.list(row.id)).map((model) => model.slug));
      const missing = slugs.filter((slug) => !listed.has(slug));
      if (missing.length > 0)
        throw new AppError('NOT_FOUND', `Integration ${row.slug} does not list ${missing.slice(0, 10).join(', ')}.`, {
          param: 'slugs',
        });
      await deps.models.remove(row.id, slugs);
      deps.onChange();
      return row;
    },
  };
}

export type IntegrationModelService = ReturnType<typeof createIntegrationModelService>;

function toModelObject(row: IntegrationModelRow): IntegrationModelObject {
  return {
    slug: row.slug,
    name: row.name,
    enabled: row.enabled === 1,
    is_custom: row.is_custom === 1,
    is_finetune: row.is_finetune === 1,
    base_model_slug: row.base_model_slug,
    pricing_config: row.pricing_config === null ? null : (JSON.parse(row.pricing_config) as Record<string, unknown>),
    created_at: row.created_at,
    last_updated_at: row.last_updated_at,
    object: 'model',
  };
}
