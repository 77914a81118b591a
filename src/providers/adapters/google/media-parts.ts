import { AppError } from '../../../lib/errors.js';
import type { GeminiPart } from './gemini-types.js';

/** MIME types Gemini documents for images (and PDF), by file extension. */
const BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s;

const invalid = (param: string, message: string) => new AppError('INVALID_REQUEST', message, { param });

/** A `data:` URL as an `inlineData` part (base64, as Gemini wants it). */
export function inlinePart(url: string, at: string): GeminiPart {
  const match = DATA_URL.exec(url);
  if (!match) throw invalid(at, `${at} is not a valid data: URL.`);
  const [, mimeType = '', params = '', payload = ''] = match;
  const base64 = params.split(';').includes('base64');
  let data: string;
  try {
    data = base64 ? payload : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64');
  } catch {
    throw invalid(at, `${at} is not a valid data: URL.`);
  }
  return { inlineData: { mimeType, data } };
}

/**
 * An image given by URL. Data URLs are sent inline; http(s) and gs:// URLs become `fileData`,
 * which Google fetches itself (public and signed URLs, Cloud Storage on Vertex). The MIME type
 * comes from the file extension; Vertex requires it, so there an unknown extension is refused.
 */
export function mediaPart(url: string, at: string, requireMimeType: boolean): GeminiPart {
  if (url.startsWith('data:')) return inlinePart(url, at);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(at, `${at} must be a data: URL or an http(s) URL.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:' && parsed.protocol !== 'gs:') {
    throw invalid(at, `${at} must be a data: URL or an http(s) URL.`);
  }
  const extension = /\.([a-z0-9]+)$/i.exec(parsed.pathname)?.[1]?.toLowerCase();
  const mimeType = extension ? BY_EXTENSION[extension] : undefined;
  if (!mimeType && requireMimeType) {
    throw invalid(
      at,
      `${at}: Vertex AI needs the image's MIME type, read from the URL's extension (${Object.keys(BY_EXTENSION).join(', ')}); send a data: URL otherwise.`,
    );
  }
  return { fileData: mimeType ? { mimeType, fileUri: url } : { fileUri: url } };
}
