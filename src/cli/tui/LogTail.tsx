import { Box, Text } from 'ink';
import { useEffect, useState } from 'react';
import {
  addToTotals,
  EMPTY_TOTALS,
  formatCost,
  formatLatency,
  formatTime,
  formatTokens,
  formatTotals,
  guardrailMark,
  statusColour,
  type InFlight,
  type LogRecord,
  type Totals,
} from './format.js';

/**
 * Fixed widths that fit 80 columns with a space between cells (ink would otherwise shrink the
 * boxes and run the time into the status); the error column takes what is left.
 */
const FIXED = [
  { title: 'TIME', width: 8 },
  { title: 'STATUS', width: 6 },
  { title: 'PROVIDER', width: 9 },
  { title: 'MODEL', width: 16 },
  { title: 'TOKENS', width: 9 },
  { title: 'COST', width: 8 },
  { title: 'LATENCY', width: 7 },
] as const;
const GAP = 1;
const FIXED_WIDTH = FIXED.reduce((sum, column) => sum + column.width + GAP, 0);
const MIN_ERROR = 5;

const columnsFor = (width: number) => [...FIXED, { title: 'ERROR', width: Math.max(MIN_ERROR, width - FIXED_WIDTH) }];

const cut = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, width - 1)}…`);

function Cells({
  values,
  width,
  colour,
}: {
  values: string[];
  width: number;
  colour?: (i: number) => string | undefined;
}) {
  const columns = columnsFor(width);
  return (
    <Box width={width}>
      {values.map((value, i) => {
        const color = colour?.(i);
        return (
          <Box
            key={columns[i]!.title}
            width={columns[i]!.width}
            flexShrink={0}
            marginRight={i < values.length - 1 ? GAP : 0}
          >
            <Text {...(color ? { color } : {})} wrap="truncate">
              {cut(value, columns[i]!.width)}
            </Text>
          </Box>
        );
      })}
    </Box>
  );
}

function Row({ record, width }: { record: LogRecord; width: number }) {
  const mark = guardrailMark(record);
  const errorWidth = columnsFor(width).at(-1)!.width;
  const error = mark ? (mark.long.length <= errorWidth ? mark.long : mark.short) : (record.error_code ?? '');
  const values = [
    formatTime(record.created_at),
    String(record.status_code),
    record.provider ?? '-',
    record.model ?? '-',
    formatTokens(record),
    formatCost(record.cost),
    formatLatency(record.latency_ms),
    error,
  ];
  const last = values.length - 1;
  return (
    <Cells
      values={values}
      width={width}
      colour={(i) => (i === 1 ? statusColour(record.status_code) : i === last && mark ? mark.colour : undefined)}
    />
  );
}

/** A request still running: no status, tokens or cost yet. */
function PendingRow({ start, width }: { start: InFlight; width: number }) {
  const values = [formatTime(start.created_at), '…', '-', start.model ?? '-', '', '', 'running', ''];
  return <Cells values={values} width={width} colour={() => 'gray'} />;
}

export interface LogTailProps {
  /** What is followed, for the title line: the server and the filters. */
  title: string;
  records: readonly LogRecord[];
  /** Requests begun and not finished, oldest first. */
  inFlight?: readonly InFlight[];
  totals: Totals;
  /** A line about the connection (reconnecting…, stopped) in place of the hint. */
  ended?: string | null;
  /** Record rows to show; older ones scroll off. */
  maxRows?: number;
  /** The terminal's width in columns. */
  width?: number;
}

/** The `svcgw logs tail` screen: newest requests at the bottom, running totals in the footer. */
export function LogTail({
  title,
  records,
  inFlight = [],
  totals,
  ended = null,
  maxRows = 20,
  width = 80,
}: LogTailProps) {
  const pending = inFlight.slice(-Math.max(1, Math.floor(maxRows / 2)));
  const shown = records.slice(-(maxRows - pending.length));
  return (
    <Box flexDirection="column" width={width}>
      <Text bold wrap="truncate">
        {title}
      </Text>
      <Cells values={columnsFor(width).map((c) => c.title)} width={width} colour={() => 'gray'} />
      {shown.length === 0 && pending.length === 0 ? (
        <Text dimColor>waiting for requests…</Text>
      ) : (
        shown.map((record) => <Row key={record.id} record={record} width={width} />)
      )}
      {pending.map((start) => (
        <PendingRow key={start.id} start={start} width={width} />
      ))}
      <Box marginTop={1} flexDirection="column">
        <Text wrap="truncate">
          {formatTotals(totals)}
          {inFlight.length > 0 ? ` · ${inFlight.length} in flight` : ''}
        </Text>
        <Text dimColor wrap="truncate">
          {ended ?? 'Ctrl+C to stop'}
        </Text>
      </Box>
    </Box>
  );
}

/**
 * Where the live screen gets records from: finished requests, news of the connection (null
 * clears it) and requests as they begin. Returns the function that stops them.
 */
export type LogSource = (
  onRecord: (record: LogRecord) => void,
  onEnd: (reason: string | null) => void,
  onStart?: (start: InFlight) => void,
) => () => void;

/** Requests in flight kept at most; the oldest are forgotten (their record may never come). */
const MAX_IN_FLIGHT = 200;

/** Keeps the last records and the totals of everything seen since it started. */
export function LogTailApp({
  title,
  source,
  maxRows = 20,
  width = 80,
}: {
  title: string;
  source: LogSource;
  maxRows?: number;
  width?: number;
}) {
  const [state, setState] = useState<{
    records: LogRecord[];
    inFlight: InFlight[];
    totals: Totals;
    ended: string | null;
  }>({
    records: [],
    inFlight: [],
    totals: EMPTY_TOTALS,
    ended: null,
  });
  useEffect(
    () =>
      source(
        (record) =>
          setState((s) => ({
            ...s,
            records: [...s.records.slice(Math.max(0, s.records.length - maxRows + 1)), record],
            inFlight: s.inFlight.filter((start) => start.id !== record.id),
            totals: addToTotals(s.totals, record),
          })),
        // A new connection cannot say what finished meanwhile: what was in flight is forgotten.
        (reason) =>
          setState((s) => ({ ...s, ended: reason, inFlight: reason?.startsWith('reconnecting') ? [] : s.inFlight })),
        (start) => setState((s) => ({ ...s, inFlight: [...s.inFlight.slice(-(MAX_IN_FLIGHT - 1)), start] })),
      ),
    [source, maxRows],
  );
  return (
    <LogTail
      title={title}
      records={state.records}
      inFlight={state.inFlight}
      totals={state.totals}
      ended={state.ended}
      maxRows={maxRows}
      width={width}
    />
  );
}
