import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What Linux knows about a process, read from /proc: CPU time and memory. The benchmark reads
 * the gateway's own counters rather than timing it from outside, so that the load generator's
 * and the mock provider's work (same machine, same cores) is not charged to the gateway.
 */

/** Clock ticks per second, the unit of utime/stime in /proc/<pid>/stat (almost always 100). */
export const CLOCK_TICKS: number = (() => {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU time of a process so far, in milliseconds (resolution 1000 / CLOCK_TICKS); NaN once it has gone. */
export function cpuMs(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return NaN;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name, field 3 (state) is index 0, so utime (14) and stime (15) are 11 and 12.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}

/** The bench process's own CPU time in milliseconds (microsecond resolution). */
export function selfCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * CPU time the whole machine spent busy so far (every state but idle and iowait), in ms. Less
 * the three benchmark processes, it shows how much else ran during a window.
 */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return ((user + nice + system + irq + softirq + steal) * 1000) / CLOCK_TICKS;
}

/**
 * Samples, half a second at a time, the CPU used by processes other than `pids` and this one,
 * until it is at most `quietCores` or `maxSeconds` have passed; returns the last sample, in cores.
 */
export async function waitForQuiet(options: {
  pids: number[];
  quietCores: number;
  maxSeconds: number;
  onWait(busyCores: number): void;
}): Promise<number> {
  const deadline = Date.now() + options.maxSeconds * 1000;
  const ours = () => options.pids.reduce((ms, pid) => ms + cpuMs(pid), selfCpuMs());
  let waited = false;
  for (;;) {
    const [machine0, ours0, t0] = [machineBusyMs(), ours(), Date.now()];
    await sleep(500);
    const background = (machineBusyMs() - machine0 - (ours() - ours0)) / (Date.now() - t0);
    if (!Number.isFinite(background) || background <= options.quietCores || Date.now() >= deadline) return background;
    if (!waited) options.onWait(background);
    waited = true;
  }
}

export interface Memory {
  /** Resident set size now (VmRSS), MiB. */
  rssMb: number;
  /** Peak resident set size (VmHWM), MiB. */
  peakRssMb: number;
}

export function memory(pid: number): Memory {
  let status = '';
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // gone: NaN below
  }
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

/**
 * The TCP port a process listens on, from its socket inodes and /proc/net/tcp{,6}. Used when
 * the process does not print its address (svcgw logs `svcgw listening` at info level only).
 */
export function listeningPort(pid: number): number | null {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1]) inodes.add(match[1]);
    } catch {
      // the descriptor closed while we looked
    }
  }
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[];
    try {
      lines = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      // local_address is col 1 ("0100007F:85DF"), st is col 3 ("0A" = LISTEN), inode is col 9.
      if (cols[3] === '0A' && cols[9] !== undefined && inodes.has(cols[9]))
        return parseInt(cols[1]?.split(':')[1] ?? '', 16);
    }
  }
  return null;
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  node: string;
  kernel: string;
  clockTicks: number;
}

export function machine(): Machine {
  let cpuModel = cpus()[0]?.model ?? 'unknown';
  try {
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpuModel;
  } catch {
    // not Linux: keep what os.cpus() says
  }
  let kernel = 'unknown';
  try {
    kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    // not Linux
  }
  return { cpus: availableParallelism(), cpuModel, node: process.version, kernel, clockTicks: CLOCK_TICKS };
}
