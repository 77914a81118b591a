import { parseFilter, type Filter } from './filters.js';
import { scimInvalid } from './scim-errors.js';
import { URN } from './schema-urns.js';

/**
 * A PATCH path (RFC 7644 §3.5.2): `attr`, `attr.sub`, `attr[filter]`, `attr[filter].sub`, any
 * of them after a schema URN. `extension` names the extension object the path is in (null: the
 * resource itself); `attr` null means the whole extension object.
 */
export interface ScimPath {
  extension: string | null;
  attr: string | null;
  filter: Filter | null;
  sub: string | null;
}

const CORE = [URN.user, URN.group];
const EXTENSIONS = [URN.enterpriseUser];
const ATTR_PATH = /^([A-Za-z$][\w$-]*)(?:\[(.+)\])?(?:\.([A-Za-z$][\w$-]*))?$/s;
const MAX_PATH_LENGTH = 1000;

export function parsePath(raw: string): ScimPath {
  let rest = raw.trim();
  if (rest.length === 0 || rest.length > MAX_PATH_LENGTH)
    throw scimInvalid('invalidPath', 'The path is empty or longer than 1000 characters.');
  let extension: string | null = null;
  const lowered = rest.toLowerCase();
  const core = CORE.find((urn) => lowered.startsWith(`${urn.toLowerCase()}:`));
  const known = EXTENSIONS.find((urn) => lowered === urn.toLowerCase() || lowered.startsWith(`${urn.toLowerCase()}:`));
  if (core) rest = rest.slice(core.length + 1);
  else if (known) {
    if (lowered === known.toLowerCase()) return { extension: known, attr: null, filter: null, sub: null };
    extension = known;
    rest = rest.slice(known.length + 1);
  } else if (lowered.startsWith('urn:')) {
    // An extension svcgw does not know: the URN is everything before the last colon of the attribute part.
    const head = rest.split('[')[0]!;
    const colon = head.lastIndexOf(':');
    extension = rest.slice(0, colon);
    rest = rest.slice(colon + 1);
  }
  const match = ATTR_PATH.exec(rest);
  if (!match)
    throw scimInvalid('invalidPath', `The path ${JSON.stringify(raw.slice(0, 200))} is not a SCIM attribute path.`);
  return {
    extension,
    attr: match[1]!,
    filter: match[2] === undefined ? null : parseFilter(match[2], 'invalidPath'),
    sub: match[3] ?? null,
  };
}
