import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startGateway, type GatewayHarness } from '../helpers/gateway.js';

/** A transcription upload with the file before the model, as clients that order fields that way send it. */
async function transcribe(g: GatewayHarness, model: string, extra: Record<string, string> = {}) {
  const form = new FormData();
  form.append('file', new Blob([randomBytes(300_000)], { type: 'audio/mpeg' }), 'speech.mp3');
  form.append('model', model);
  for (const [name, value] of Object.entries(extra)) form.append(name, value);
  const res = await fetch(`${g.baseUrl}/v1/audio/transcriptions`, {
    method: 'POST',
    headers: { 'x-service-api-key': g.adminKey, ...g.viaMock },
    body: form,
  });
  return { status: res.status, text: await res.text() };
}

const jsonAnswer = (body: unknown) => ({
  kind: 'raw' as const,
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify(body)),
});

describe('request logs of multipart uploads', () => {
  it('log the model form field and the usage of transcription models, by tokens or by seconds', async () => {
    const g = await startGateway();
    // gpt-4o-transcribe reports tokens (OpenAI's `usage.type: "tokens"`).
    g.mock.behave(
      jsonAnswer({
        text: 'Hello.',
        usage: {
          type: 'tokens',
          input_tokens: 14,
          input_token_details: { text_tokens: 0, audio_tokens: 14 },
          output_tokens: 45,
          total_tokens: 59,
        },
      }),
      { times: 1 },
    );
    const tokens = await transcribe(g, 'gpt-4o-transcribe');
    expect(tokens.status).toBe(200);
    expect(JSON.parse(tokens.text).text).toBe('Hello.');
    // whisper-1 reports the seconds of audio (`usage.type: "duration"`).
    g.mock.behave(jsonAnswer({ text: 'Hello.', usage: { type: 'duration', seconds: 9 } }), { times: 1 });
    expect((await transcribe(g, 'whisper-1')).status).toBe(200);

    const [seconds, byTokens] = await g.logs(2);
    expect(byTokens).toMatchObject({
      endpoint_type: 'createTranscription',
      model: 'gpt-4o-transcribe',
      requested_model: 'gpt-4o-transcribe',
      prompt_tokens: 14,
      completion_tokens: 45,
      total_tokens: 59,
      audio_seconds: null,
      is_success: true,
    });
    expect(seconds).toMatchObject({
      model: 'whisper-1',
      requested_model: 'whisper-1',
      audio_seconds: 9,
      prompt_tokens: null,
    });
    // The upload reached the provider whole.
    expect(g.mock.requests[0]!.body.length).toBeGreaterThan(300_000);
  });

  it('logs a streamed transcription as a stream, with the usage of its done event', async () => {
    const g = await startGateway();
    const frames = [
      { type: 'transcript.text.delta', delta: 'Hello' },
      {
        type: 'transcript.text.done',
        text: 'Hello',
        usage: { type: 'tokens', input_tokens: 7, output_tokens: 2, total_tokens: 9 },
      },
    ].map((event) => `data: ${JSON.stringify(event)}\n\n`);
    g.mock.behave(
      {
        kind: 'raw',
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: Buffer.from(frames.join('')),
      },
      { times: 1 },
    );
    const res = await transcribe(g, 'gpt-4o-mini-transcribe', { stream: 'true' });
    expect(res.text).toBe(frames.join(''));
    const [log] = await g.logs(1);
    expect(log).toMatchObject({
      stream: true,
      model: 'gpt-4o-mini-transcribe',
      prompt_tokens: 7,
      completion_tokens: 2,
      total_tokens: 9,
    });
  });
});

describe('requested and served models', () => {
  it('are both kept, for plain and streamed answers', async () => {
    const g = await startGateway();
    const config = JSON.stringify({
      provider: 'openai',
      custom_host: g.mock.baseUrl,
      api_key: 'sk-target',
      override_params: { model: 'gpt-4o' },
    });
    const send = (body: Record<string, unknown>) =>
      fetch(`${g.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'x-service-api-key': g.adminKey, 'content-type': 'application/json', 'x-service-config': config },
        body: JSON.stringify(body),
      }).then((res) => res.text());
    const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    await send(ask);
    expect(await send({ ...ask, stream: true })).toContain('[DONE]');
    const [streamed, plain] = await g.logs(2);
    expect(plain).toMatchObject({ stream: false, requested_model: 'gpt-4o-mini', model: 'gpt-4o' });
    expect(streamed).toMatchObject({ stream: true, requested_model: 'gpt-4o-mini', model: 'gpt-4o' });
    expect(streamed.total_tokens).toBeGreaterThan(0);

    // The provider's own name for the model it served wins over the name it was sent.
    g.mock.behave(
      jsonAnswer({
        id: 'c',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o-2024-08-06',
        choices: [],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
      { times: 1 },
    );
    await send(ask);
    expect((await g.logs(3))[0]).toMatchObject({ requested_model: 'gpt-4o-mini', model: 'gpt-4o-2024-08-06' });
  });
});
