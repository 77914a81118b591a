import { styleText } from 'node:util';

export interface Column<T> {
  header: string;
  value(row: T): unknown;
  /** Colour of a cell, on a terminal. */
  colour?(row: T): Parameters<typeof styleText>[0] | null;
}

type Colour = Parameters<typeof styleText>[0];

const MAX_CELL = 48;

export const isTerminal = (stream: NodeJS.WriteStream = process.stdout): boolean => stream.isTTY === true;
const colours = (stream: NodeJS.WriteStream): boolean => stream.isTTY === true && (stream.hasColors?.() ?? false);

export function paint(
  text: string,
  colour: Colour | null | undefined,
  stream: NodeJS.WriteStream = process.stdout,
): string {
  return colour && colours(stream) ? styleText(colour, text) : text;
}

export function cell(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return '-';
    case 'object':
      if (value === null) return '-';
      return Array.isArray(value) ? value.map(cell).join(',') : JSON.stringify(value);
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
    case 'symbol':
    case 'function':
      return String(value);
  }
}

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** Plain aligned columns: readable on a terminal, still greppable in a pipe. */
export function renderTable<T>(
  rows: readonly T[],
  columns: readonly Column<T>[],
  options: { clip?: boolean; colour?: boolean } = {},
): string {
  const cells = rows.map((row) =>
    columns.map((column) =>
      options.clip === false ? cell(column.value(row)) : clip(cell(column.value(row)), MAX_CELL),
    ),
  );
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: string[], styles: (Colour | null | undefined)[] = []) =>
    values
      .map((value, i) => {
        const padded = i === values.length - 1 ? value : value.padEnd(widths[i]!);
        return options.colour && styles[i] ? styleText(styles[i], padded) : padded;
      })
      .join('  ')
      .trimEnd();
  const header = line(columns.map((column) => column.header.toUpperCase()));
  return [
    options.colour ? styleText('bold', header) : header,
    ...cells.map((values, r) =>
      line(
        values,
        columns.map((column) => column.colour?.(rows[r]!)),
      ),
    ),
  ].join('\n');
}

/**
 * A reader that stops early (`svcgw … | head -1`) closes the pipe; the next write then fails
 * with EPIPE. That is the reader's choice, not an error: end at once, quietly, with exit 0.
 */
export function endQuietlyWhenPipeCloses(
  stream: NodeJS.WritableStream,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    exit(0);
  });
}

/** What every command prints through: JSON for scripts (`--json`), readable text otherwise. */
export function createOutput(json: boolean, stdout: NodeJS.WriteStream = process.stdout) {
  const write = (text: string) => void stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return {
    json,
    write,
    /** `--json`: the value as one JSON document; otherwise `text()`. */
    result(value: unknown, text: () => string): void {
      write(json ? JSON.stringify(value, null, 2) : text());
    },
    table<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
      return rows.length === 0
        ? '(none)'
        : renderTable(rows, columns, { clip: isTerminal(stdout), colour: colours(stdout) });
    },
    /** A single object as `field  value` lines. */
    record(value: Record<string, unknown>): string {
      const width = Math.max(...Object.keys(value).map((key) => key.length));
      return Object.entries(value)
        .map(([key, v]) => `${key.padEnd(width)}  ${cell(v)}`)
        .join('\n');
    },
  };
}

export type Output = ReturnType<typeof createOutput>;

/**
 * A one-line progress indicator on stderr for long operations, shown only when stderr is a
 * terminal, so that pipes and CI logs get none of it.
 */
export function createProgress(label: string, stream: NodeJS.WriteStream = process.stderr) {
  const active = stream.isTTY === true;
  let shown = false;
  return {
    update(done: number, total?: number, detail = ''): void {
      if (!active) return;
      shown = true;
      stream.write(`\r\x1b[2K${label} ${done}${total !== undefined ? `/${total}` : ''}${detail ? ` ${detail}` : ''}`);
    },
    done(): void {
      if (active && shown) stream.write('\r\x1b[2K');
    },
  };
}
