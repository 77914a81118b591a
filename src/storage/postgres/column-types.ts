import {
  ColumnDefinitionNode,
  DataTypeNode,
  OperationNodeTransformer,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/**
 * The migrations declare SQLite's column types; on PostgreSQL these mean something narrower, so
 * they are widened here, once, rather than in every migration: `integer` (64-bit in SQLite) is
 * `bigint` (epoch milliseconds, token sums), `real` (a double in SQLite) is `double precision`
 * (costs), `blob` is `bytea`, and an auto-increment key is `bigserial`. Booleans stay 0/1
 * integers on both engines, so repositories compare them the same way.
 */
const WIDER: Readonly<Record<string, DataTypeNode['dataType']>> = {
  integer: 'bigint',
  real: 'double precision',
  blob: 'bytea',
};

class WidenColumnTypes extends OperationNodeTransformer {
  protected override transformDataType(node: DataTypeNode): DataTypeNode {
    const wider = WIDER[node.dataType];
    return wider ? DataTypeNode.create(wider) : node;
  }

  protected override transformColumnDefinition(node: ColumnDefinitionNode): ColumnDefinitionNode {
    const column = super.transformColumnDefinition(node);
    if (!column.autoIncrement) return column;
    return { ...column, autoIncrement: false, dataType: DataTypeNode.create('bigserial') };
  }
}

export class PostgresColumnTypes implements KyselyPlugin {
  readonly #transformer = new WidenColumnTypes();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#transformer.transformNode(args.node);
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

/**
 * The same widening for DDL written as SQL text (the migrations that need SQLite's own syntax):
 * SQLite's types become PostgreSQL's, and `WITHOUT ROWID` (SQLite's clustered tables) goes.
 */
export const postgresDdl = (sqliteDdl: string): string =>
  sqliteDdl
    .replace(/\bINTEGER\b/g, 'BIGINT')
    .replace(/\bREAL\b/g, 'DOUBLE PRECISION')
    .replace(/\bBLOB\b/g, 'BYTEA')
    .replace(/\s*WITHOUT ROWID\b/g, '');
