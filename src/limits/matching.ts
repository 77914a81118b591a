import type { DeploymentLimits } from './deployment-limits.js';

/** What a limit can match and group on, about one gateway request. */
export interface RequestFacts {
  organisationId: string;
  workspaceId: string;
  workspaceSlug: string;
  apiKeyId: string;
  endpointType: string;
  metadata: Readonly<Record<string, string>> | null;
  /** The deployment whose instance serves the request, when it serves one: its limits apply too. */
  deployment?: DeploymentLimits;
}

export interface Condition {
  key: string;
  value: string;
}

function factValues(facts: RequestFacts, key: string): Array<string | undefined> {
  switch (key) {
    case 'api_key':
      return [facts.apiKeyId];
    case 'organisation_id':
      return [facts.organisationId];
    case 'workspace_id':
      // Conditions name a workspace by id or by slug, as everywhere else in the API.
      return [facts.workspaceId, facts.workspaceSlug];
    case 'endpoint_type':
      return [facts.endpointType];
    default:
      return key.startsWith('metadata.') ? [facts.metadata?.[key.slice('metadata.'.length)]] : [undefined];
  }
}

/** A policy applies when every one of its conditions matches the request. */
export const matchesAll = (conditions: readonly Condition[], facts: RequestFacts): boolean =>
  conditions.every((condition) => factValues(facts, condition.key).includes(condition.value));

/**
 * The bucket a request counts in: the group-by values joined with '|'. A request without a
 * grouped metadata field counts in the bucket of the empty value.
 */
export const bucketOf = (groupBy: ReadonlyArray<{ key: string }>, facts: RequestFacts): string =>
  groupBy.map(({ key }) => factValues(facts, key)[0] ?? '').join('|');
