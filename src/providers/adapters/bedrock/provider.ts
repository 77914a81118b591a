import type { EndpointType } from '../../endpoints.js';
import type { ProviderDefinition } from '../../types.js';

/**
 * AWS Bedrock runtime. Requests go to the regional hosts `bedrock-runtime.{region}.amazonaws.com`
 * (Converse, InvokeModel) and `bedrock-agent-runtime.{region}.amazonaws.com` (Rerank); the base
 * below is the us-east-1 runtime host, shown for reference only: the region always comes from
 * the credential (`aws_region` or `x-service-aws-region`).
 */
const definition: ProviderDefinition = {
  name: 'bedrock',
  displayName: 'AWS Bedrock',
  baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com',
  auth: {
    kind: 'adapter',
    description:
      'AWS SigV4 (access key id, secret access key, optional session token, region), or a Bedrock API key as Authorization: Bearer',
  },
  wireFormat: 'bedrock',
  endpoints: new Set<EndpointType>(['chatComplete', 'embed', 'rerank', 'proxy']),
  docsUrl: 'https://docs.aws.amazon.com/bedrock/latest/APIReference/API_Operations_Amazon_Bedrock_Runtime.html',
};

export const BEDROCK_PROVIDER: ProviderDefinition = Object.freeze(definition);
