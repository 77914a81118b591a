import { describe, expect, it } from 'vitest';
import { cardUrlOf, rpcOriginProblem, servedCard } from '../../src/agents/card.js';
import { readRpcCall, rpcErrorOf } from '../../src/agents/json-rpc.js';
import { publicBaseUrl } from '../../src/agents/public-url.js';
import { A2A_VERSION } from '../../src/agents/protocol.js';

const GATEWAY = 'https://gw.example.test/v1/agents/echo';
const hidden = (id: string) => id === 'secret';

describe('the card the agent gateway serves', () => {
  it('points every JSON-RPC interface of a 1.0 card at the gateway and drops the other bindings', () => {
    const card = servedCard(
      {
        name: 'A',
        supportedInterfaces: [
          { url: 'http://agent.internal/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
          { url: 'http://agent.internal/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
          { url: 'grpc://agent.internal', protocolBinding: 'GRPC', protocolVersion: '1.0' },
          { url: 'http://agent.internal/rpc', protocolBinding: 'jsonrpc', protocolVersion: '0.3' },
        ],
        skills: [
          { id: 'open', name: 'Open', securityRequirements: [{ schemes: { oauth: { list: ['x'] } } }] },
          { id: 'secret', name: 'Secret' },
        ],
        securitySchemes: { oauth: { oauth2SecurityScheme: {} } },
        securityRequirements: [{ schemes: { oauth: { list: [] } } }],
        signatures: [{ protected: 'x', signature: 'y' }],
      },
      { gatewayUrl: GATEWAY, hidden },
    );
    expect(card.supportedInterfaces).toEqual([
      { url: GATEWAY, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: GATEWAY, protocolBinding: 'jsonrpc', protocolVersion: '0.3' },
    ]);
    expect(card.skills).toEqual([{ id: 'open', name: 'Open' }]);
    expect(card.signatures).toBeUndefined();
    expect(card.securitySchemes).toEqual({
      svcgw: {
        apiKeySecurityScheme: { location: 'header', name: 'x-service-api-key', description: expect.any(String) },
      },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { svcgw: { list: [] } } }]);
    expect(JSON.stringify(card)).not.toContain('agent.internal');
  });

  it('rewrites a 0.3 card: url, preferred transport, JSON-RPC additional interfaces, security', () => {
    const card = servedCard(
      {
        name: 'A',
        url: 'http://agent.internal/rest',
        preferredTransport: 'HTTP+JSON',
        protocolVersion: '0.3',
        additionalInterfaces: [
          { url: 'http://agent.internal/rpc', transport: 'JSONRPC' },
          { url: 'http://agent.internal/rest', transport: 'HTTP+JSON' },
        ],
        skills: [{ id: 'secret' }, { id: 'open', security: [{ oauth: [] }] }],
        securitySchemes: { oauth: { type: 'oauth2' } },
        security: [{ oauth: [] }],
      },
      { gatewayUrl: GATEWAY, hidden },
    );
    expect(card).toMatchObject({
      url: GATEWAY,
      preferredTransport: 'JSONRPC',
      additionalInterfaces: [{ url: GATEWAY, transport: 'JSONRPC' }],
      skills: [{ id: 'open' }],
      securitySchemes: { svcgw: { type: 'apiKey', in: 'header', name: 'x-service-api-key' } },
      security: [{ svcgw: [] }],
    });
    expect(JSON.stringify(card)).not.toContain('agent.internal');
  });

  it('finds the card under a base URL (prefix kept) or at a .json URL', () => {
    expect(cardUrlOf('http://a.test')).toBe('http://a.test/.well-known/agent-card.json');
    expect(cardUrlOf('http://a.test/agents/echo')).toBe('http://a.test/agents/echo/.well-known/agent-card.json');
    expect(cardUrlOf('http://a.test/agents/echo/?x=1')).toBe('http://a.test/agents/echo/.well-known/agent-card.json');
    expect(cardUrlOf('http://a.test/cards/echo.json')).toBe('http://a.test/cards/echo.json');
  });

  it("sends credentials only to the integration's origin", () => {
    expect(rpcOriginProblem('http://a.test:9/rpc', 'http://a.test:9/')).toBeNull();
    expect(rpcOriginProblem('http://b.test:9/rpc', 'http://a.test:9/')).toContain('rpc_url');
    expect(rpcOriginProblem('https://a.test/rpc', 'http://a.test/')).toContain('rpc_url');
    expect(rpcOriginProblem('file:///etc/passwd', 'http://a.test/')).toContain('not http');
    expect(rpcOriginProblem('::', 'http://a.test/')).toContain('not a URL');
  });
});

describe('JSON-RPC requests and answers', () => {
  it('reads the method and the skill a message names; refuses what is not one JSON-RPC 2.0 request', () => {
    expect(
      readRpcCall({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { metadata: { skill_id: 'x' } } },
      }),
    ).toEqual({
      method: 'message/send',
      skillId: 'x',
    });
    expect(
      readRpcCall({ jsonrpc: '2.0', id: 'a', method: 'SendMessage', params: { metadata: { skillId: 'y' } } }),
    ).toEqual({
      method: 'SendMessage',
      skillId: 'y',
    });
    expect(readRpcCall([{ jsonrpc: '2.0', method: 'x' }])).toMatchObject({ param: 'body' });
    expect(readRpcCall('x')).toMatchObject({ param: 'body' });
    expect(readRpcCall({ jsonrpc: '1.0', method: 'x' })).toMatchObject({ param: 'jsonrpc' });
    expect(readRpcCall({ jsonrpc: '2.0', method: '' })).toMatchObject({ param: 'method' });
    expect(readRpcCall({ jsonrpc: '2.0', method: 'x', id: {} })).toMatchObject({ param: 'id' });
  });

  it('reads a JSON-RPC error answer for the log', () => {
    expect(rpcErrorOf('{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}')).toEqual({
      code: -32001,
      message: 'Task not found',
    });
    expect(rpcErrorOf('{"jsonrpc":"2.0","id":1,"result":{}}')).toBeNull();
    expect(rpcErrorOf('not json')).toBeNull();
  });
});

describe('the public base URL', () => {
  it('is the Host the caller used, or what a proxy forwarded; nonsense is ignored', () => {
    expect(publicBaseUrl({ host: '127.0.0.1:8787' }, 'http')).toBe('http://127.0.0.1:8787');
    expect(
      publicBaseUrl(
        { host: 'internal:80', 'x-forwarded-host': 'gw.example.test', 'x-forwarded-proto': 'https' },
        'http',
      ),
    ).toBe('https://gw.example.test');
    expect(
      publicBaseUrl({ host: 'a.test', 'x-forwarded-host': 'evil/path', 'x-forwarded-proto': 'javascript' }, 'http'),
    ).toBe('http://a.test');
    expect(publicBaseUrl({ host: '[::1]:8787' }, 'http')).toBe('http://[::1]:8787');
  });
});

describe('the A2A protocol version', () => {
  it('is the one the official SDK implements (written out so the server need not load the SDK)', async () => {
    const { A2A_PROTOCOL_VERSION } = await import('@a2a-js/sdk');
    expect(A2A_VERSION).toBe(A2A_PROTOCOL_VERSION);
  });
});
