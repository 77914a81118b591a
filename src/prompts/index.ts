export {
  contentOf,
  createPromptLookup,
  splitRef,
  type PromptCaller,
  type PromptLookup,
  type PromptRun,
} from './lookup.js';
export {
  parsedTemplates,
  partialsOf,
  renderPrompt,
  templateShape,
  type PromptContent,
  type RenderedPrompt,
} from './render.js';
export { MAX_PARTIAL_DEPTH, parsePartialRef, type PartialRef } from './template.js';
