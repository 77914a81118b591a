import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/admin/scim/protocol/attributes.js';
import { eqConditions, parseFilter } from '../../../src/admin/scim/protocol/filters.js';
import { applyPatch, patchOperations } from '../../../src/admin/scim/protocol/patch.js';
import { parsePath } from '../../../src/admin/scim/protocol/paths.js';
import { ScimError } from '../../../src/admin/scim/protocol/scim-errors.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

function patched(resource: JsonObject, ...operations: Array<Record<string, unknown>>): JsonObject {
  applyPatch(resource, patchOperations({ Operations: operations }));
  return resource;
}

function scimTypeOf(run: () => unknown): string | null {
  try {
    run();
  } catch (error) {
    if (error instanceof ScimError) return error.scimType;
    throw error;
  }
  return 'no error';
}

describe('SCIM PATCH paths', () => {
  it('reads attributes, sub-attributes, filters and schema URNs', () => {
    expect(parsePath('userName')).toEqual({ extension: null, attr: 'userName', filter: null, sub: null });
    expect(parsePath('name.givenName')).toMatchObject({ attr: 'name', sub: 'givenName' });
    expect(parsePath('emails[type eq "work"].value')).toMatchObject({
      attr: 'emails',
      filter: { op: 'eq', attrPath: 'type', compValue: 'work' },
      sub: 'value',
    });
    expect(parsePath('urn:ietf:params:scim:schemas:core:2.0:User:title')).toMatchObject({
      extension: null,
      attr: 'title',
    });
    expect(parsePath(`${ENTERPRISE}:manager.value`)).toMatchObject({
      extension: ENTERPRISE,
      attr: 'manager',
      sub: 'value',
    });
    expect(parsePath(ENTERPRISE)).toEqual({ extension: ENTERPRISE, attr: null, filter: null, sub: null });
    expect(parsePath('urn:example:ext:1.0:Thing:color')).toMatchObject({
      extension: 'urn:example:ext:1.0:Thing',
      attr: 'color',
    });
    expect(scimTypeOf(() => parsePath('a b'))).toBe('invalidPath');
    expect(scimTypeOf(() => parsePath('emails[type eq]'))).toBe('invalidPath');
  });
});

describe('SCIM PATCH operations', () => {
  it('accepts any case of op and Operations, and refuses what is not a PatchOp', () => {
    expect(patchOperations({ operations: [{ OP: 'Replace', Path: 'title', Value: 'x' }] })).toEqual([
      { op: 'replace', path: 'title', value: 'x' },
    ]);
    expect(scimTypeOf(() => patchOperations({ Operations: [{ op: 'copy' }] }))).toBe('invalidSyntax');
    expect(scimTypeOf(() => patchOperations({}))).toBe('invalidSyntax');
    expect(scimTypeOf(() => patchOperations({ Operations: [{ op: 'add', path: 'x' }] }))).toBe('invalidValue');
    expect(scimTypeOf(() => patchOperations({ Operations: Array(1001).fill({ op: 'remove', path: 'x' }) }))).toBe(
      'tooMany',
    );
  });

  it('adds to multi-valued attributes (no duplicates), merges complex ones, replaces the rest', () => {
    const user = patched(
      { emails: [{ value: 'a@x.example', type: 'work' }], name: { givenName: 'A', familyName: 'B' }, title: 'T' },
      { op: 'add', path: 'emails', value: [{ value: 'A@x.example', primary: true }, { value: 'b@x.example' }] },
      { op: 'replace', path: 'name', value: { givenName: 'C' } },
      { op: 'add', path: 'title', value: 'U' },
      { op: 'add', path: 'roles', value: { value: 'r' } },
    );
    expect(user).toEqual({
      emails: [{ value: 'A@x.example', type: 'work', primary: true }, { value: 'b@x.example' }],
      name: { givenName: 'C', familyName: 'B' },
      title: 'U',
      roles: [{ value: 'r' }],
    });
  });

  it('applies paths through filters, creating the value an equality filter describes', () => {
    const user = patched(
      { emails: [{ value: 'h@x.example', type: 'home' }] },
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'w@x.example' },
      { op: 'Replace', path: 'emails[type eq "WORK"].primary', value: true },
      { op: 'remove', path: 'emails[type eq "home"]' },
    );
    expect(user).toEqual({ emails: [{ type: 'work', value: 'w@x.example', primary: true }] });
    expect(
      scimTypeOf(() => patched({ emails: [] }, { op: 'replace', path: 'emails[value co "x"].type', value: 'w' })),
    ).toBe('noTarget');
  });

  it('takes value objects whose keys are paths, and extension attributes', () => {
    const user = patched(
      { name: { givenName: 'A' } },
      { op: 'replace', value: { 'name.familyName': 'B', active: 'False', [`${ENTERPRISE}:department`]: 'Sales' } },
      { op: 'add', path: `${ENTERPRISE}:manager`, value: { value: 'M-1' } },
    );
    expect(user).toEqual({
      name: { givenName: 'A', familyName: 'B' },
      active: 'False',
      [ENTERPRISE]: { department: 'Sales', manager: { value: 'M-1' } },
    });
    expect(scimTypeOf(() => patched({}, { op: 'remove' }))).toBe('noTarget');
  });

  it('removes members by filter, by value list, or all of them', () => {
    const group = () => ({ members: [{ value: 'u1' }, { value: 'u2' }, { value: 'u3' }] });
    expect(patched(group(), { op: 'remove', path: 'members[value eq "u2"]' }).members).toEqual([
      { value: 'u1' },
      { value: 'u3' },
    ]);
    expect(
      patched(group(), { op: 'Remove', path: 'members', value: [{ value: 'u1' }, { value: 'U3' }] }).members,
    ).toEqual([{ value: 'u2' }]);
    expect(patched(group(), { op: 'remove', path: 'members' }).members).toBeUndefined();
    expect(patched(group(), { op: 'replace', path: 'members', value: [{ value: 'u9' }] }).members).toEqual([
      { value: 'u9' },
    ]);
  });
});

describe('SCIM PATCH of multi-valued attributes', () => {
  it('merges values of one identity added in one request into the first, in order', () => {
    const group = patched(
      { members: [] },
      {
        op: 'add',
        path: 'members',
        value: [{ value: 'u1', display: 'A' }, { value: 'u2' }, { value: 'U1', type: 'User' }, { value: 'u2' }],
      },
    );
    expect(group.members).toEqual([{ value: 'U1', display: 'A', type: 'User' }, { value: 'u2' }]);
  });

  it('merges an added value into the first existing one of its identity, where it stands', () => {
    const group = patched(
      { members: [{ value: 'u1', display: 'old' }, { value: 'u2' }, { value: 'u2', display: 'second' }] },
      { op: 'add', path: 'members', value: [{ value: 'u3' }, { value: 'U2', display: 'B' }, { value: 'u1' }] },
    );
    expect(group.members).toEqual([
      { value: 'u1', display: 'old' },
      { value: 'U2', display: 'B' },
      { value: 'u2', display: 'second' },
      { value: 'u3' },
    ]);
  });

  it('replaces plain values and values without a value of the same identity', () => {
    expect(patched({ tags: ['a', 7] }, { op: 'add', path: 'tags', value: ['A', 'b', 7, 'B', 8] }).tags).toEqual([
      'A',
      7,
      'B',
      8,
    ]);
    expect(
      patched({ roles: [{ type: 'x' }] }, { op: 'add', path: 'roles', value: [{ type: 'y' }, { type: 'x' }] }).roles,
    ).toEqual([{ type: 'x' }, { type: 'y' }]);
  });

  it('removes every value of a listed identity, duplicates included, and only those', () => {
    const group = patched(
      { members: [{ value: 'u1' }, { value: 'u2' }, { value: 'U1', display: 'again' }, { value: 'u3' }] },
      { op: 'remove', path: 'members', value: [{ value: 'U1' }, { value: 'u9' }, { value: 'u1' }] },
    );
    expect(group.members).toEqual([{ value: 'u2' }, { value: 'u3' }]);
    expect(patched({ tags: ['a', 'b'] }, { op: 'remove', path: 'tags', value: 'A' }).tags).toEqual(['b']);
  });

  it('adds and removes 50,000 values in one operation each', () => {
    const n = 50_000;
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
    const group: JsonObject = { members: range(0, n).map((i) => ({ value: `u${i}` })) };
    // Half of the added values are members already (in another case), half are new.
    patched(group, {
      op: 'add',
      path: 'members',
      value: range(n / 2, n / 2 + n).map((i) => ({ value: `U${i}`, display: `${i}` })),
    });
    expect(group.members).toEqual([
      ...range(0, n / 2).map((i) => ({ value: `u${i}` })),
      ...range(n / 2, n / 2 + n).map((i) => ({ value: `U${i}`, display: `${i}` })),
    ]);
    patched(group, { op: 'remove', path: 'members', value: range(0, n).map((i) => ({ value: `u${2 * i}` })) });
    expect(group.members).toEqual([
      ...range(0, n / 2)
        .filter((i) => i % 2 === 1)
        .map((i) => ({ value: `u${i}` })),
      ...range(n / 2, n / 2 + n)
        .filter((i) => i % 2 === 1)
        .map((i) => ({ value: `U${i}`, display: `${i}` })),
    ]);
  });

  it('removes the values a filter matches, duplicates included, and keeps the order of the rest', () => {
    const members = ['u1', 'u2', 'u3', 'u4', 'u1'].map((value, i) => ({
      value,
      display: i % 2 === 0 ? 'even' : 'odd',
    }));
    const group = patched({ members }, { op: 'remove', path: 'members[display eq "even"]' });
    expect(group.members).toEqual([members[1], members[3]]);
  });
});

describe('SCIM list filters', () => {
  const supported = { username: 'userName', externalid: 'externalId', 'emails.value': 'email' } as const;

  it('reads eq conditions joined by and, value paths included', () => {
    expect(eqConditions(parseFilter('userName Eq "a@x.example" and externalId eq "7"'), supported)).toEqual([
      { attr: 'userName', value: 'a@x.example' },
      { attr: 'externalId', value: '7' },
    ]);
    expect(eqConditions(parseFilter('emails[value eq "a@x.example"]'), supported)).toEqual([
      { attr: 'email', value: 'a@x.example' },
    ]);
  });

  it('refuses other operators and attributes, saying what is supported', () => {
    for (const filter of [
      'userName co "a"',
      'userName eq "a" or externalId eq "b"',
      'title eq "x"',
      'not (userName eq "a")',
    ]) {
      try {
        eqConditions(parseFilter(filter), supported);
        expect.unreachable(filter);
      } catch (error) {
        expect((error as ScimError).scimType).toBe('invalidFilter');
        expect((error as ScimError).message).toContain('userName, externalId, emails.value');
      }
    }
  });
});
