/**
 * Where a provider that resells another's models finds its prices when it has no price file
 * of its own: Vertex AI serves Google's Gemini models under the same ids; Bedrock names
 * Anthropic's and Cohere's models `<vendor>.<model>-v<n>:<m>`, optionally behind a
 * cross-region prefix (`us.`, `eu.`, `apac.`, `global.`). Their on-demand list prices are the
 * vendors' own, which is what this assumes (docs/pricing.md).
 */
export function priceAlias(provider: string, model: string): { provider: string; model: string } | null {
  if (provider === 'vertex-ai')
    return { provider: 'google', model: model.replace(/^(publishers\/)?google\/(models\/)?/, '') };
  if (provider !== 'bedrock') return null;
  const id = model.startsWith('arn:') ? (model.split('/').pop() ?? model) : model;
  const bare = id.replace(/^(us|eu|apac|global|us-gov)\./, '').replace(/-v\d+(:\d+)?$/, '');
  const dot = bare.indexOf('.');
  if (dot < 0) return null;
  const vendor = bare.slice(0, dot);
  const vendorModel = bare.slice(dot + 1);
  return vendor === 'anthropic' || vendor === 'cohere' ? { provider: vendor, model: vendorModel } : null;
}
