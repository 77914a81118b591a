import { invalid } from '../../../lib/errors.js';
import { isObject, type RequestBlock } from './wire-types.js';

const DATA_URL = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/s;

/** OpenAI message content (a string or parts) as Anthropic content blocks; `at` names it in errors. */
export function contentBlocks(content: unknown, at: string): RequestBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content))
    throw invalid(`${at}.content`, `${at}.content must be a string or an array of content parts.`);
  return content.map((part, i) => contentPart(part, `${at}.content[${i}]`));
}

/** Text only (system prompts, assistant text, tool results): images there have no Anthropic equivalent. */
export function textBlocks(content: unknown, at: string): Array<Extract<RequestBlock, { type: 'text' }>> {
  return contentBlocks(content, at).map((block, i) => {
    if (block.type !== 'text') throw invalid(`${at}.content[${i}]`, `${at}.content[${i}] must be a text part here.`);
    return block;
  });
}

function contentPart(part: unknown, at: string): RequestBlock {
  if (!isObject(part)) throw invalid(at, `${at} must be an object.`);
  const cache = part.cache_control === undefined ? {} : { cache_control: part.cache_control };
  switch (part.type) {
    case 'text':
      if (typeof part.text !== 'string') throw invalid(`${at}.text`, `${at}.text must be a string.`);
      return { type: 'text', text: part.text, ...cache };
    case 'refusal': // an earlier assistant refusal, sent back as the text it was
      if (typeof part.refusal !== 'string') throw invalid(`${at}.refusal`, `${at}.refusal must be a string.`);
      return { type: 'text', text: part.refusal };
    case 'image_url':
      return { ...imageBlock(part.image_url, `${at}.image_url`), ...cache };
    case 'file':
      return { ...documentBlock(part.file, `${at}.file`), ...cache };
    default:
      throw invalid(
        `${at}.type`,
        `${at}.type '${String(part.type)}' is not supported by Anthropic (text, image_url and PDF file parts are).`,
      );
  }
}

/** data: URLs become a base64 source, http(s) URLs a url source that Anthropic fetches itself. */
function imageBlock(imageUrl: unknown, at: string): RequestBlock {
  const url = isObject(imageUrl) ? imageUrl.url : imageUrl;
  if (typeof url !== 'string') throw invalid(`${at}.url`, `${at}.url must be a string.`);
  if (url.startsWith('data:')) {
    const { mediaType, data } = decodeDataUrl(url, `${at}.url`);
    return { type: 'image', source: { type: 'base64', media_type: mediaType, data } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw invalid(`${at}.url`, `${at}.url must be an http(s) URL or a base64 data: URL.`);
}

/** A PDF as a `document` block: only inline file_data, since OpenAI file ids mean nothing to Anthropic. */
function documentBlock(file: unknown, at: string): RequestBlock {
  const data = isObject(file) ? file.file_data : undefined;
  if (typeof data !== 'string' || !data.startsWith('data:'))
    throw invalid(at, `${at} needs file_data as a base64 data: URL; OpenAI file ids mean nothing to Anthropic.`);
  const decoded = decodeDataUrl(data, `${at}.file_data`);
  if (decoded.mediaType !== 'application/pdf')
    throw invalid(`${at}.file_data`, `${at}.file_data must be a PDF (application/pdf) for Anthropic.`);
  return { type: 'document', source: { type: 'base64', media_type: decoded.mediaType, data: decoded.data } };
}

function decodeDataUrl(url: string, at: string): { mediaType: string; data: string } {
  const match = DATA_URL.exec(url);
  if (!match) throw invalid(at, `${at} is not a base64 data: URL (data:<media type>;base64,<data>).`);
  return { mediaType: (match[1] ?? '').toLowerCase(), data: match[3] ?? '' };
}
