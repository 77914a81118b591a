/** A small JSON client for the admin API: returns status, headers and the parsed body. */
export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** Longer than any answer a test waits for, shorter than a test's time-out: a hang names its request. */
const ANSWER_LIMIT_MS = 60_000;

export function apiClient(baseUrl: string, apiKey?: string) {
  async function call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<JsonResponse<T>> {
    const init: RequestInit = {
      method,
      headers: { ...(apiKey ? { 'x-service-api-key': apiKey } : {}), ...headers },
      signal: AbortSignal.timeout(ANSWER_LIMIT_MS),
    };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${baseUrl}${path}`, init);
      text = await response.text();
    } catch (error) {
      if ((error as Error).name !== 'TimeoutError') throw error;
      throw new Error(`${method} ${baseUrl}${path}: no answer within ${ANSWER_LIMIT_MS / 1000} s`, { cause: error });
    }
    let parsed: unknown = text;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  }
  return {
    get: <T = any>(path: string, headers?: Record<string, string>) => call<T>('GET', path, undefined, headers),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
      call<T>('POST', path, body, headers),
    put: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
      call<T>('PUT', path, body, headers),
    delete: <T = any>(path: string, headers?: Record<string, string>) => call<T>('DELETE', path, undefined, headers),
    call,
  };
}

export type ApiClient = ReturnType<typeof apiClient>;
