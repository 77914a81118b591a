import { describe, expect, it } from 'vitest';
import { createWorkspace, createWorkspaceKey } from '../helpers/fixtures.js';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';
import { apiClient } from '../helpers/http.js';

/** A stored provider named `mock-openai` whose host is the mock. */
async function withMockProvider(g: GatewayHarness): Promise<void> {
  const created = await g.admin.post('/v1/integrations', {
    name: 'Mock OpenAI',
    slug: 'mock-openai',
    ai_provider_id: 'openai',
    key: 'sk-stored-secret',
    configurations: { custom_host: g.mock.baseUrl },
  });
  expect(created.status).toBe(200);
}

const messages = JSON.stringify([
  { role: 'system', content: '{{>tone}} You help with {{product}}.' },
  { role: 'user', content: [{ type: 'text', text: 'Question: {{question}}' }] },
]);

async function supportPrompt(g: GatewayHarness) {
  await withMockProvider(g);
  expect(
    (await g.admin.post('/v1/prompts/partials', { name: 'Tone', slug: 'tone', string: 'Be polite.' })).status,
  ).toBe(200);
  const created = await g.admin.post('/v1/prompts', {
    name: 'Support',
    slug: 'support',
    string: messages,
    parameters: { temperature: 0.3, max_tokens: 50, response_format: { type: 'text' } },
    model: 'gpt-4o-mini',
    virtual_key: '@mock-openai',
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
    tool_choice: 'auto',
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body as { id: string; version_id: string };
}

describe('prompts: render and run', () => {
  it('renders the request body: variables, partials, stored parameters, hyperparameters over them', async () => {
    const g = await startGateway();
    const { id } = await supportPrompt(g);
    const rendered = await g.admin.post(`/v1/prompts/${id}/render`, {
      variables: { product: 'svcgw', question: 'Why "quotes" & <tags>?' },
      hyperparameters: { temperature: 0.9 },
      max_tokens: 20,
    });
    expect(rendered.status, JSON.stringify(rendered.body)).toBe(200);
    expect(rendered.body).toEqual({
      success: true,
      data: {
        model: 'gpt-4o-mini',
        temperature: 0.9,
        max_tokens: 20,
        response_format: { type: 'text' },
        messages: [
          { role: 'system', content: 'Be polite. You help with svcgw.' },
          { role: 'user', content: [{ type: 'text', text: 'Question: Why "quotes" & <tags>?' }] },
        ],
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
        tool_choice: 'auto',
      },
    });

    // A missing variable is a 400 naming it; a section is optional.
    const missing = await g.admin.post(`/v1/prompts/${id}/render`, { variables: { product: 'svcgw' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'INVALID_REQUEST', param: 'variables.question' });
    expect(missing.body.error.message).toContain('question');
    const noVariables = await g.admin.post(`/v1/prompts/${id}/render`, {});
    expect(noVariables.status).toBe(400);
    expect(noVariables.body.error.param).toBe('variables');

    // Partials at versions and labels: {{>tone@2}}, {{>tone@staging}}, {{>tone@latest}}.
    const v2 = await g.admin.put('/v1/prompts/partials/tone', {
      string: 'Be brief{{#formal}}, and formal{{/formal}}.',
    });
    expect(v2.status).toBe(200);
    expect((await g.admin.put('/v1/prompts/partials/tone/versions/2', { label_id: 'staging' })).status).toBe(200);
    const text = async (template: string, variables: Record<string, unknown> = {}) => {
      const upd = await g.admin.put(`/v1/prompts/${id}`, { patch: true, string: template });
      expect(upd.status, JSON.stringify(upd.body)).toBe(200);
      const res = await g.admin.post(`/v1/prompts/${id}@latest/render`, { variables });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.messages[0].content as string;
    };
    expect(await text('{{>tone}}')).toBe('Be polite.');
    expect(await text('{{>tone@2}}', { formal: true })).toBe('Be brief, and formal.');
    expect(await text('{{>tone@staging}}')).toBe('Be brief.');
    expect(await text('{{>tone@latest}} / {{>tone@1}}')).toBe('Be brief. / Be polite.');
    // A variable used inside a partial is required like any other.
    await g.admin.post('/v1/prompts/partials', { name: 'Sign', slug: 'sign', string: 'Regards, {{agent}}' });
    await g.admin.put(`/v1/prompts/${id}`, { patch: true, string: 'Hi. {{>sign}}' });
    const inPartial = await g.admin.post(`/v1/prompts/${id}@latest/render`, { variables: {} });
    expect(inPartial.body.error.param).toBe('variables.agent');
    // A partial made to include its includer is refused when saved.
    const cycle = await g.admin.put('/v1/prompts/partials/sign', { string: '{{>sign}}' });
    expect(cycle.status).toBe(400);
  });

  it('runs a prompt through the gateway, JSON and streamed, with usage logged against the prompt', async () => {
    const g = await startGateway();
    const { id } = await supportPrompt(g);
    const variables = { product: 'svcgw', question: 'How do I rotate keys?' };
    const res = await g.admin.post(`/v1/prompts/${id}/completions`, { variables, temperature: 0.1 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.object).toBe('chat.completion');
    expect(res.body.usage.total_tokens).toBeGreaterThan(0);
    const sent = JSON.parse(g.mock.requests[0]!.body.toString('utf8'));
    expect(g.mock.requests[0]!.url).toBe('/v1/chat/completions');
    expect(g.mock.requests[0]!.headers.authorization).toBe('Bearer sk-stored-secret');
    expect(sent).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.1, max_tokens: 50, tool_choice: 'auto' });
    expect(sent.messages[1].content[0].text).toBe('Question: How do I rotate keys?');

    // Label production on a second version; run by label, then streamed.
    await g.admin.put(`/v1/prompts/${id}`, { patch: true, model: 'gpt-4o' });
    expect((await g.admin.put(`/v1/prompts/${id}/versions/2`, { label_id: 'production' })).status).toBe(200);
    const stream = await fetch(`${g.baseUrl}/v1/prompts/${id}@production/completions`, {
      method: 'POST',
      headers: { 'x-service-api-key': g.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ variables, stream: true, hyperparameters: { stream_options: { include_usage: true } } }),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const events = await stream.text();
    expect(events).toContain('data: [DONE]');
    expect(JSON.parse(g.mock.requests[1]!.body.toString('utf8'))).toMatchObject({ model: 'gpt-4o', stream: true });

    const logs = await g.logs(2);
    const byVersion = Object.fromEntries(logs.map((log: any) => [log.prompt_version, log]));
    expect(byVersion[1]).toMatchObject({
      prompt_id: id,
      prompt_label: null,
      path: `/v1/prompts/${id}/completions`,
      endpoint_type: 'chatComplete',
      credential_source: 'provider:mock-openai',
      stream: false,
    });
    expect(byVersion[1].total_tokens).toBeGreaterThan(0);
    expect(byVersion[2]).toMatchObject({ prompt_id: id, prompt_label: 'production', stream: true, model: 'gpt-4o' });
    expect(byVersion[2].total_tokens).toBeGreaterThan(0);

    // Analytics group by prompt: both runs under the prompt's id.
    const groups = await g.admin.get('/v1/analytics/groups/prompt?columns=total_tokens');
    expect(groups.status).toBe(200);
    expect(groups.body.data).toEqual([expect.objectContaining({ prompt: id, requests: 2 })]);
    expect(groups.body.data[0].total_tokens).toBe(byVersion[1].total_tokens + byVersion[2].total_tokens);
  });

  it('runs completion templates on /completions, and refuses what it cannot run with a clear 4xx', async () => {
    const g = await startGateway();
    await withMockProvider(g);
    const created = await g.admin.post('/v1/prompts', {
      name: 'Haiku',
      string: 'Write a haiku about {{topic}}',
      is_raw_template: 1,
      model: 'gpt-4o-mini',
      virtual_key: '@mock-openai',
    });
    expect(created.status).toBe(200);
    const id = created.body.id;
    const rendered = await g.admin.post(`/v1/prompts/${id}/render`, { variables: { topic: 'rain' } });
    expect(rendered.body.data).toEqual({ model: 'gpt-4o-mini', prompt: 'Write a haiku about rain' });
    const res = await g.admin.post(`/v1/prompts/${id}/completions`, { variables: { topic: 'rain' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(g.mock.requests[0]!.url).toBe('/v1/completions');
    const [log] = await g.logs(1);
    expect(log).toMatchObject({ prompt_id: id, endpoint_type: 'complete', prompt_version: 1 });

    expect((await g.admin.post('/v1/prompts/nope/completions', { variables: {} })).status).toBe(404);
    expect((await g.admin.post(`/v1/prompts/${id}@7/completions`, { variables: {} })).status).toBe(404);
    const badParam = await g.admin.post(`/v1/prompts/${id}/completions`, {
      variables: { topic: 'x' },
      temperature: 5,
    });
    expect(badParam.status).toBe(400);
    expect(badParam.body.error.param).toBe('temperature');
    const noModel = await g.admin.post('/v1/prompts', { name: 'No model', string: 'Hi' });
    const noModelRun = await g.admin.post(`/v1/prompts/${noModel.body.id}/completions`, { variables: {} });
    expect(noModelRun.status).toBe(400);
    expect(noModelRun.body.error.param).toBe('model');
    expect(g.mock.requests).toHaveLength(1);
  });

  it("runs in the prompt's workspace, behind its tenant wall", async () => {
    const g = await startGateway();
    const team = await createWorkspace(g.admin, 'Team', 'team');
    await createWorkspace(g.admin, 'Other', 'other');
    const integration = await g.admin.post('/v1/integrations', {
      name: 'Mock',
      slug: 'mock-int',
      ai_provider_id: 'openai',
      key: 'sk-team',
      configurations: { custom_host: g.mock.baseUrl },
      create_default_provider: false,
    });
    expect(integration.status).toBe(200);
    const provider = await g.admin.post('/v1/providers', {
      name: 'Team mock',
      slug: 'team-mock',
      integration_id: 'mock-int',
      workspace_id: 'team',
    });
    expect(provider.status, JSON.stringify(provider.body)).toBe(200);
    const prompt = await g.admin.post('/v1/prompts', {
      name: 'Team prompt',
      slug: 'team-prompt',
      workspace_id: 'team',
      string: 'Hello {{who}}',
      model: 'gpt-4o-mini',
      virtual_key: '@team-mock',
    });
    expect(prompt.status).toBe(200);

    // An admin key's run is counted in the prompt's workspace and finds the providers there.
    const byAdmin = await g.admin.post('/v1/prompts/team-prompt/completions', { variables: { who: 'team' } });
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(200);
    expect((await g.logs(1))[0]).toMatchObject({ workspace_id: team.id, credential_source: 'provider:team-mock' });

    const scopes = ['completions.write'];
    const own = apiClient(g.baseUrl, (await createWorkspaceKey(g.admin, { workspace_id: 'team', scopes })).key);
    const other = apiClient(g.baseUrl, (await createWorkspaceKey(g.admin, { workspace_id: 'other', scopes })).key);
    expect((await own.post('/v1/prompts/team-prompt/completions', { variables: { who: 'me' } })).status).toBe(200);
    const refused = await other.post('/v1/prompts/team-prompt/completions', { variables: { who: 'me' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('WORKSPACE_FORBIDDEN');
    expect((await other.post('/v1/prompts/team-prompt/render', { variables: { who: 'me' } })).status).toBe(403);
    expect(g.mock.requests).toHaveLength(2);
  });
});
