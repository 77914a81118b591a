/** A small JSON client for the admin API: returns status, headers and the parsed body. */
export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export function apiClient(baseUrl: string, apiKey?: string) {
  async function call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<JsonResponse<T>> {
    const init: RequestInit = { method, headers: { ...(apiKey ? { 'x-service-api-key': apiKey } : {}), ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, init);
    const text = await response.text();
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
