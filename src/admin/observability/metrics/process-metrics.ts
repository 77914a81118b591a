import { getHeapSpaceStatistics } from 'node:v8';
import { family, labels, num } from './exposition.js';

/** When this process started, in seconds since the epoch. */
const START_TIME_S = Math.round(Date.now() / 1000 - process.uptime());

/**
 * This process's CPU and memory, under the names Node.js exporters (prom-client's default
 * metrics) and Prometheus's own clients use, so that existing dashboards and alerts work: what
 * an operator watches to size instances and to see memory settle after load (docs/operations.md,
 * "Memory"). Read at each scrape.
 */
export function renderProcessMetrics(): string {
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  const spaces = getHeapSpaceStatistics();
  const space = (s: (typeof spaces)[number]) => labels({ space: s.space_name.replace(/_space$/, '') });
  const single: Array<[name: string, type: string, help: string, value: string | number]> = [
    ['process_cpu_user_seconds_total', 'counter', 'User CPU time spent, in seconds.', num(cpu.user / 1e6)],
    ['process_cpu_system_seconds_total', 'counter', 'System CPU time spent, in seconds.', num(cpu.system / 1e6)],
    [
      'process_cpu_seconds_total',
      'counter',
      'User and system CPU time spent, in seconds.',
      num((cpu.user + cpu.system) / 1e6),
    ],
    ['process_start_time_seconds', 'gauge', 'Start time of the process, in seconds since the epoch.', START_TIME_S],
    ['process_resident_memory_bytes', 'gauge', 'Resident memory size, in bytes.', memory.rss],
    ['nodejs_heap_size_total_bytes', 'gauge', 'V8 heap size, in bytes.', memory.heapTotal],
    ['nodejs_heap_size_used_bytes', 'gauge', 'V8 heap used, in bytes.', memory.heapUsed],
    [
      'nodejs_external_memory_bytes',
      'gauge',
      'Memory of C++ objects bound to JavaScript objects, in bytes.',
      memory.external,
    ],
  ];
  return [
    ...single.flatMap(([name, type, help, value]) => family(name, type, help, [`${name} ${value}`])),
    ...family(
      'nodejs_heap_space_size_total_bytes',
      'gauge',
      'Size of each V8 heap space, in bytes (space "new" is the young generation).',
      spaces.map((s) => `nodejs_heap_space_size_total_bytes${space(s)} ${s.space_size}`),
    ),
    ...family(
      'nodejs_heap_space_size_used_bytes',
      'gauge',
      'Bytes used in each V8 heap space.',
      spaces.map((s) => `nodejs_heap_space_size_used_bytes${space(s)} ${s.space_used_size}`),
    ),
  ].join('\n');
}
