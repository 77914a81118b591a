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
  statusColour,
  type LogRecord,
  type Totals,
} from './format.js';

const COLUMNS = [
  { title: 'TIME', width: 9 },
  { title: 'STATUS', width: 7 },
  { title: 'PROVIDER', width: 14 },
  { title: 'MODEL', width: 26 },
  { title: 'TOKENS', width: 14 },
  { title: 'COST', width: 11 },
  { title: 'LATENCY', width: 8 },
] as const;

const cut = (text: string, width: number) => (text.length < width ? text : `${text.slice(0, width - 2)}…`);

function Row({ record }: { record: LogRecord }) {
  const cells = [
    formatTime(record.created_at),
    String(record.status_code),
    record.provider ?? '-',
    record.model ?? '-',
    formatTokens(record),
    formatCost(record.cost),
    formatLatency(record.latency_ms),
  ];
  return (
    <Box>
      {cells.map((value, i) => (
        <Box key={COLUMNS[i]!.title} width={COLUMNS[i]!.width}>
          <Text {...(i === 1 ? { color: statusColour(record.status_code) } : {})} wrap="truncate">
            {cut(value, COLUMNS[i]!.width)}
          </Text>
        </Box>
      ))}
    </Box>
  );
}

export interface LogTailProps {
  /** What is followed, for the title line: the server and the filters. */
  title: string;
  records: readonly LogRecord[];
  totals: Totals;
  /** Set when the stream has ended (the reason). */
  ended?: string | null;
  /** Record rows to show; older ones scroll off. */
  maxRows?: number;
}

/** The `svcgw logs tail` screen: newest requests at the bottom, running totals in the footer. */
export function LogTail({ title, records, totals, ended = null, maxRows = 20 }: LogTailProps) {
  const shown = records.slice(-maxRows);
  return (
    <Box flexDirection="column">
      <Text bold>{title}</Text>
      <Box>
        {COLUMNS.map((column) => (
          <Box key={column.title} width={column.width}>
            <Text dimColor>{column.title}</Text>
          </Box>
        ))}
      </Box>
      {shown.length === 0 ? (
        <Text dimColor>waiting for requests…</Text>
      ) : (
        shown.map((record) => <Row key={record.id} record={record} />)
      )}
      <Box marginTop={1}>
        <Text>{formatTotals(totals)}</Text>
        <Text dimColor>{ended ? `  · ${ended}` : '  · Ctrl+C to stop'}</Text>
      </Box>
    </Box>
  );
}

/** Where the live screen gets records from; returns the function that stops them. */
export type LogSource = (onRecord: (record: LogRecord) => void, onEnd: (reason: string) => void) => () => void;

/** Keeps the last records and the totals of everything seen since it started. */
export function LogTailApp({ title, source, maxRows = 20 }: { title: string; source: LogSource; maxRows?: number }) {
  const [state, setState] = useState<{ records: LogRecord[]; totals: Totals; ended: string | null }>({
    records: [],
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
            totals: addToTotals(s.totals, record),
          })),
        (reason) => setState((s) => ({ ...s, ended: reason })),
      ),
    [source, maxRows],
  );
  return <LogTail title={title} records={state.records} totals={state.totals} ended={state.ended} maxRows={maxRows} />;
}
